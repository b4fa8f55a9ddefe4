"""Catalogs created with CREATE CATALOG (FLIP-295): their definitions, the
types that turn a definition into a Spark catalog plug-in, the catalog store
that keeps them across restarts and the gateway-wide registry that puts them
into every session."""
