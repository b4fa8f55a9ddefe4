"""Operations: the state machine, the worker pool and per-session bookkeeping."""
