"""The ground floor, the words every layer shares: errors and exit codes, the workspace's
layout, path helpers, the parsers of option text, whose rules decide a run, signals as
exceptions, the version."""
