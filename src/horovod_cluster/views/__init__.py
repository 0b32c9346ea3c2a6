"""Renderings of the results: terminal (`render`, `progress`), `html` and `junit`; the results never import them."""
