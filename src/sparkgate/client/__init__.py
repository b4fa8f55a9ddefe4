"""The SQL client: REPL, script runner, printers and executors."""
