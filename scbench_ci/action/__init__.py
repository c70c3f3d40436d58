"""The GitHub Action front end: INPUT_* in, one command's core called, then published."""
