"""Result buffering and the fetch-token protocol."""
