"""The command-line front end: one module per command, each with `add_arguments(parser)`,
`options(args)` and `run(args) -> int`, which calls the command's core and prints its report."""
