"""Result encodings shared by endpoints and client (JSON, Arrow)."""
