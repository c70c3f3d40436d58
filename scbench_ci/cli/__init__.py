"""The command-line front end: arguments in, one command's core called, its exit code out."""
