"""Configuration loading, launcher and composition root."""
