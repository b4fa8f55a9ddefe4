"""Tests of the HiveServer2 endpoint."""
