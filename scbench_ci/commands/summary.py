"""`summary`: the markdown job summary of a results.json (an evaluation's or a check's)."""

from __future__ import annotations

from functools import partial

from scbench_ci.foundation.errors import UsageError
from scbench_ci.foundation.paths import real_path
from scbench_ci.options import SummaryOptions
from scbench_ci.outputs.check_console import checked
from scbench_ci.outputs.check_summary import render_check_summary
from scbench_ci.outputs.summary import summary_renderer
from scbench_ci.results.file import load_results
from scbench_ci.trust.output_folder import write_file


def run_summary(options: SummaryOptions) -> str:
    """The markdown, also written to `options.output` when there is one."""
    results = load_results(options.results)
    render = (
        partial(render_check_summary, fail_on=options.fail_on)
        if checked(results)
        else summary_renderer(options)
    )
    try:
        markdown = render(
            results,
            artifact_url=options.artifact_url,
            artifact_name=options.artifact_name,
            # The reports are beside the results.json.
            reports_folder=options.results.parent,
        )
    except ValueError as error:
        raise UsageError(f"--artifact-url: {error}") from None
    if options.output is None:
        return markdown
    if options.output.is_dir() and not options.output.is_symlink():
        raise UsageError(f"--output: {options.output} is a folder; give a file")
    # A link, fifo or read-only file there is replaced, never written through.
    folder = real_path(options.output.parent)
    if not folder.is_dir():
        raise UsageError(f"--output: {options.output.parent} is not a folder")
    write_file(folder, options.output.name, markdown.encode())
    return markdown
