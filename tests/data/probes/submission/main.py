"""A probe: prints, as JSON, what this process sees."""

import json
import os
import resource
import shutil
import stat
import sys


def disk(path):
    try:
        usage = shutil.disk_usage(path)
    except OSError as error:
        return str(error)
    return {"free": usage.free, "total": usage.total}


def writable(path):
    probe = os.path.join(path, f".probe-{os.getpid()}")
    try:
        with open(probe, "w") as handle:
            handle.write("x")
        os.unlink(probe)
    except OSError:
        return False
    return True


def stdin():
    try:
        info = os.fstat(0)
    except OSError:
        return "closed"
    kind = "fifo" if stat.S_ISFIFO(info.st_mode) else "chr" if stat.S_ISCHR(info.st_mode) else "other"
    return {"kind": kind, "tty": os.isatty(0), "data": sys.stdin.read(64) if kind != "chr" or not os.isatty(0) else ""}


def can_import(name):
    try:
        __import__(name)
    except ImportError:
        return False
    return True


def limits():
    names = ["RLIMIT_NOFILE", "RLIMIT_STACK", "RLIMIT_CORE", "RLIMIT_FSIZE", "RLIMIT_AS", "RLIMIT_DATA"]
    return {name: list(resource.getrlimit(getattr(resource, name))) for name in names}


def main():
    umask = os.umask(0)
    os.umask(umask)
    home = os.environ.get("HOME", "")
    print(
        json.dumps(
            {
                "executable": sys.executable,
                "prefix": sys.prefix,
                "base_prefix": sys.base_prefix,
                "version": sys.version.split()[0],
                "cwd": os.getcwd(),
                "env": dict(os.environ),
                "umask": oct(umask),
                "root": os.geteuid() == 0,
                "limits": limits(),
                "stdin": stdin(),
                "disk": {"cwd": disk("."), "tmp": disk("/tmp"), "home": disk(home or "/")},
                "writable": {"cwd": writable("."), "tmp": writable("/tmp"), "home": writable(home or "/")},
                "which": {name: shutil.which(name) for name in ("python", "python3", "uv", "uvx", "pip")},
                "yaml": can_import("yaml"),
                "pytest": can_import("pytest"),
                "files": sorted(os.listdir(".")),
            },
            sort_keys=True,
        )
    )


if __name__ == "__main__":
    main()
