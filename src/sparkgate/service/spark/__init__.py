"""Spark engine start-up, type mapping, Arrow and job tags."""
