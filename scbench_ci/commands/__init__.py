"""One core per command: its options in (`options/`), a result and a written output folder out.
The front ends (`cli/`, `action/`) build the options and show or publish what a core returns."""
