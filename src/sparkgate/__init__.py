"""sparkgate."""
