/* Each rank contributes rank+1; MPI_Allreduce(SUM) must give size*(size+1)/2 on every rank. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
    int rank, size, value, sum = 0, len;
    char host[MPI_MAX_PROCESSOR_NAME];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(host, &len);
    value = rank + 1;
    MPI_Allreduce(&value, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    printf("rank=%d size=%d host=%s sum=%d\n", rank, size, host, sum);
    MPI_Finalize();
    return 0;
}
