"""Sessions and their manager."""
