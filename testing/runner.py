"""GitHub's runner running a Docker container action's main step, as actions/runner's source does.

Each part follows one file of actions/runner (src/Runner.Worker/):
- ActionRunner.cs: the step's `with:` inputs, in a dictionary whose keys ignore case, then every
  input of action.yml the step does not set, with its default (a string; "" when it has none).
- Handlers/Handler.cs AddInputsToEnvironment: `INPUT_<name, spaces as _, upper case>` for each.
- Handlers/ContainerActionHandler.cs: the entrypoint is runs.entrypoint, else the step input
  `entryPoint` (any case); the arguments are runs.args, each quoted, else the step input `args`
  as it is written. runs.env fills only what is not set yet. HOME, the mounts, the working folder
  /github/workspace, the github and runner contexts' variables and ACTIONS_* follow, and every
  value naming a mounted host folder is translated to the container's path.
- FileCommandManager.cs: the file-command files, `<prefix><guid>` in _runner_file_commands, and
  the NAME=VALUE / NAME<<DELIMITER rules set_output_ is read by.
- Container/DockerCommandManager.cs DockerRun: the `docker run` options, in the runner's order,
  joined into one argument string that .NET splits into argv (Process.Unix.cs
  ParseArgumentsIntoList, below as `split_arguments`); docker/cli's exit codes 125-127 when the
  container does not start.
The mounts include /github/runner_temp, which current runners add (their logged `docker run`).
The one difference: the container joins the host's network, as the doubles of the artifact service
and the REST API listen on loopback (the runner adds --network only to join a job container's
network). The event's payload is the step's `event`, written where the runner writes it.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import docker
import yaml
from docker.errors import APIError

WORKSPACE = "/github/workspace"
_FILE_COMMANDS = {
    "path": "add_path_",
    "env": "set_env_",
    "step_summary": "step_summary_",
    "state": "save_state_",
    "output": "set_output_",
}
_EXPRESSION = "${{"
JOB_TOKEN = "ghs_emulated-job-token"
"""What `${{ github.token }}` is in the emulated job."""


class StepInputs:
    """C#'s Dictionary<string, string>(StringComparer.OrdinalIgnoreCase): a key keeps the
    spelling it was first set with."""

    def __init__(self) -> None:
        self._items: dict[str, tuple[str, str]] = {}

    def __contains__(self, key: str) -> bool:
        return key.upper() in self._items

    def __setitem__(self, key: str, value: str) -> None:
        first = self._items.get(key.upper())
        self._items[key.upper()] = (first[0] if first else key, value)

    def get(self, key: str) -> str | None:
        item = self._items.get(key.upper())
        return item[1] if item else None

    def items(self) -> Iterator[tuple[str, str]]:
        return iter(self._items.values())


@dataclass(frozen=True)
class ActionManifest:
    """The parts of action.yml a container action's main step uses."""

    inputs: dict[str, str]
    """Each input's default, in the file's order."""
    image: str
    entrypoint: str | None
    args: tuple[str, ...] | None
    env: dict[str, str] | None

    @classmethod
    def load(cls, path: Path) -> ActionManifest:
        data = yaml.safe_load(path.read_text())
        inputs = {}
        for name, spec in (data.get("inputs") or {}).items():
            default = (spec or {}).get("default", "")
            # The runner evaluates a default to a string: an unquoted `false` fails the step.
            assert isinstance(default, str), f"input {name}: default {default!r} is not a string"
            inputs[str(name)] = _default(default)
        runs = data["runs"]
        assert runs["using"] == "docker", runs
        args = runs.get("args")
        env = runs.get("env")
        return cls(
            inputs=inputs,
            image=runs["image"],
            entrypoint=_literal(runs["entrypoint"]) if runs.get("entrypoint") else None,
            args=None if args is None else tuple(_literal(str(arg)) for arg in args),
            env=None if env is None else {str(k): _literal(str(v)) for k, v in env.items()},
        )

    def step_inputs(self, with_: Mapping[str, str]) -> StepInputs:
        """ActionRunner.RunAsync: the step's inputs, then the defaults of those it leaves out."""
        inputs = StepInputs()
        for name, value in with_.items():
            inputs[name] = value
        for name, default in self.inputs.items():
            if name not in inputs:
                inputs[name] = default
        return inputs

    def container_entrypoint(self, inputs: StepInputs) -> str | None:
        """ContainerActionHandler: "use entrypoint input, this is for action v1 which doesn't
        have action.yml" when runs.entrypoint is absent."""
        return self.entrypoint or inputs.get("entryPoint")

    def container_args(self, inputs: StepInputs) -> str | None:
        if self.args is None:
            return inputs.get("args")
        quoted = (arg.replace("\\", "\\\\").replace('"', '\\"') for arg in self.args)
        return "".join(f' "{arg}"' for arg in quoted)


def _default(value: str) -> str:
    """An input's default as the runner evaluates it: the one expression action.yml uses, the
    job's token, is the emulated job's."""
    return JOB_TOKEN if value == "${{ github.token }}" else _literal(value)


def _literal(value: str) -> str:
    # Expressions are evaluated by the runner; this emulation has no evaluator.
    assert _EXPRESSION not in value, f"the runner emulation does not evaluate {value!r}"
    return value


def input_variable(name: str) -> str:
    """Handler.AddInputsToEnvironment's name for an input."""
    return f"INPUT_{name.replace(' ', '_').upper()}"


def split_arguments(arguments: str) -> list[str]:
    """dotnet/runtime Process.Unix.cs ParseArgumentsIntoList: how the runner's one argument
    string for `docker` becomes its argv (only spaces and tabs separate arguments)."""
    results: list[str] = []
    i = 0
    while i < len(arguments):
        while i < len(arguments) and arguments[i] in " \t":
            i += 1
        if i == len(arguments):
            break
        current: list[str] = []
        in_quotes = False
        while i < len(arguments):
            backslashes = 0
            while i < len(arguments) and arguments[i] == "\\":
                i += 1
                backslashes += 1
            if backslashes:
                if i >= len(arguments) or arguments[i] != '"':
                    current.append("\\" * backslashes)
                else:
                    current.append("\\" * (backslashes // 2))
                    if backslashes % 2:
                        current.append('"')
                        i += 1
                continue
            character = arguments[i]
            if character == '"':
                if in_quotes and i < len(arguments) - 1 and arguments[i + 1] == '"':
                    current.append('"')
                    i += 1
                else:
                    in_quotes = not in_quotes
                i += 1
                continue
            if character in " \t" and not in_quotes:
                break
            current.append(character)
            i += 1
        results.append("".join(current))
    return results


@dataclass
class RunnerHost:
    """The runner's folders on the host, as a hosted runner lays them out under `root`."""

    root: Path
    repository: str = "scbench/demo"

    @property
    def work(self) -> Path:
        return self.root / "_work"

    @property
    def temp(self) -> Path:
        return self.work / "_temp"

    @property
    def home(self) -> Path:
        return self.temp / "_github_home"

    @property
    def workflow(self) -> Path:
        return self.temp / "_github_workflow"

    @property
    def file_commands(self) -> Path:
        return self.temp / "_runner_file_commands"

    @property
    def workspace(self) -> Path:
        name = self.repository.split("/")[-1]
        return self.work / name / name

    def create(self) -> None:
        for folder in (self.home, self.workflow, self.file_commands, self.workspace):
            folder.mkdir(parents=True, exist_ok=True)
        (self.work / "_tool").mkdir(exist_ok=True)

    def mounts(self) -> list[tuple[str, str]]:
        """ContainerActionHandler's volumes, in the order current runners pass them."""
        return [
            ("/var/run/docker.sock", "/var/run/docker.sock"),
            (str(self.temp), "/github/runner_temp"),
            (str(self.home), "/github/home"),
            (str(self.workflow), "/github/workflow"),
            (str(self.file_commands), "/github/file_commands"),
            (str(self.workspace), WORKSPACE),
        ]

    def translate(self, value: str) -> str:
        """ContainerInfo.TranslateToContainerPath, the specific folders before the temp folder."""
        mappings = [*self.mounts()[2:], self.mounts()[1]]
        for host, container in mappings:
            if value == host:
                return container
            if value.startswith(host + "/"):
                return container + value[len(host) :]
        return value

    def label(self) -> str:
        """DockerCommandManager.DockerInstanceLabel: a hash of the runner's root, 6 characters."""
        return hashlib.sha256(str(self.root).encode()).hexdigest()[:6]


@dataclass
class Step:
    """One `uses:` step of a workflow job, and the job around it."""

    with_: dict[str, str]
    env: dict[str, str] = field(default_factory=dict)
    """The env context: the workflow's, the job's and the step's `env:`."""
    github: dict[str, str] = field(default_factory=dict)
    """github context values exported as GITHUB_<NAME> (run_id, repository, ...)."""
    runtime_token: str = "unused-runtime-token"
    results_url: str | None = None
    event: Mapping[str, object] = field(default_factory=dict)
    """The webhook payload of the run's event (the github context's `event`)."""


@dataclass
class RunnerResult:
    exit_code: int
    log: str
    outputs: dict[str, str]
    summary: str
    argv: list[str]
    """`docker run`'s arguments, as the runner's process gets them."""
    environment: dict[str, str]
    """The container's environment."""


def run_step(
    client: docker.DockerClient, image: str, manifest: ActionManifest, host: RunnerHost, step: Step
) -> RunnerResult:
    host.create()
    inputs = manifest.step_inputs(step.with_)
    file_commands = _initialize_file_commands(host)
    event_path = host.workflow / "event.json"
    event_path.write_text(json.dumps(step.event))  # ExecutionContext.WriteWebhookPayload
    environment = _environment(manifest, host, step, inputs, file_commands, event_path)
    argv = _docker_run_argv(manifest, host, inputs, image, environment)
    exit_code, log = _docker_run(client, argv, environment)
    summary = file_commands["step_summary"].read_text()
    return RunnerResult(
        exit_code=exit_code,
        log=log,
        outputs=read_env_file(file_commands["output"].read_text()),
        summary=summary,
        argv=argv,
        environment=environment,
    )


def _initialize_file_commands(host: RunnerHost) -> dict[str, Path]:
    suffix = str(uuid.uuid4())
    files = {}
    for context, prefix in _FILE_COMMANDS.items():
        files[context] = host.file_commands / f"{prefix}{suffix}"
        files[context].touch()
    return files


def _environment(
    manifest: ActionManifest,
    host: RunnerHost,
    step: Step,
    inputs: StepInputs,
    file_commands: dict[str, Path],
    event_path: Path,
) -> dict[str, str]:
    environment = dict(step.env)
    for name, value in inputs.items():
        environment[input_variable(name)] = value
    for name, value in (manifest.env or {}).items():
        environment.setdefault(name, value)
    environment["HOME"] = str(host.home)
    github = {
        **step.github,
        "workspace": str(host.workspace),
        "event_path": str(event_path),
        **{context: str(path) for context, path in file_commands.items()},
    }
    for name, value in github.items():
        environment[f"GITHUB_{name.upper()}"] = value
    runner = {
        "os": "Linux",
        "arch": "X64",
        "name": "GitHub Actions 1",
        "environment": "github-hosted",
        "tool_cache": str(host.work / "_tool"),
        "temp": str(host.temp),
        "workspace": str(host.workspace.parent),
    }
    for name, value in runner.items():
        environment[f"RUNNER_{name.upper()}"] = value
    environment["ACTIONS_RUNTIME_URL"] = "https://pipelines.actions.githubusercontent.com/x/"
    environment["ACTIONS_RUNTIME_TOKEN"] = step.runtime_token
    if step.results_url:
        environment["ACTIONS_RESULTS_URL"] = step.results_url
    return {name: host.translate(value) for name, value in environment.items()}


def _docker_run_argv(
    manifest: ActionManifest,
    host: RunnerHost,
    inputs: StepInputs,
    image: str,
    environment: Mapping[str, str],
) -> list[str]:
    """DockerCommandManager.DockerRun's argument string, split as .NET splits it."""
    options = [
        f"--name {image.replace(':', '_')}_{uuid.uuid4().hex[:6]}",
        f"--label {host.label()}",
        f"--workdir {WORKSPACE}",
        "--rm",
        *(f'-e "{name}"' for name in environment),
        "-e GITHUB_ACTIONS=true",
    ]
    if "CI" not in environment:
        options.append("-e CI=true")
    entrypoint = manifest.container_entrypoint(inputs)
    if entrypoint:
        options.append(f'--entrypoint "{entrypoint}"')
    for source, target in host.mounts():
        options.append(f'-v "{_escape(source)}":"{_escape(target)}"')
    options.append(image)
    options.append(manifest.container_args(inputs) or "")
    return ["run", *split_arguments(" ".join(options))]


def _escape(path: str) -> str:
    return path.replace('"', '\\"')


def _docker_run(
    client: docker.DockerClient, argv: list[str], process_env: Mapping[str, str]
) -> tuple[int, str]:
    """`docker run` with these arguments, through the Docker SDK, as docker/cli runs them."""
    spec = _DockerRun.parse(argv, process_env)
    try:
        container = client.containers.create(
            spec.image,
            command=spec.command or None,
            # docker/cli: --entrypoint is one string, the whole of the new ENTRYPOINT.
            entrypoint=[spec.entrypoint] if spec.entrypoint else None,
            name=spec.name,
            labels=dict.fromkeys(spec.labels, ""),
            working_dir=spec.workdir,
            environment=spec.environment,
            volumes={source: {"bind": target, "mode": "rw"} for source, target in spec.volumes},
            network_mode="host",
        )
    except APIError as error:
        return 125, str(error)
    try:
        try:
            container.start()
        except APIError as error:
            return _start_error_exit_code(str(error.explanation or error)), str(error)
        exit_code = int(container.wait(timeout=900)["StatusCode"])
        return exit_code, container.logs().decode(errors="replace")
    finally:
        container.remove(force=True)  # --rm


def _start_error_exit_code(message: str) -> int:
    """docker/cli runStartContainerErr."""
    not_found = (
        "executable file not found",
        "no such file or directory",
        "system cannot find the file specified",
    )
    if any(text in message for text in not_found):
        return 127
    if "permission denied" in message or "is a directory" in message:
        return 126
    return 125


@dataclass
class _DockerRun:
    name: str = ""
    labels: list[str] = field(default_factory=list)
    workdir: str = ""
    environment: dict[str, str] = field(default_factory=dict)
    entrypoint: str | None = None
    volumes: list[tuple[str, str]] = field(default_factory=list)
    image: str = ""
    command: list[str] = field(default_factory=list)

    @classmethod
    def parse(cls, argv: list[str], process_env: Mapping[str, str]) -> _DockerRun:
        """The options DockerRun writes, read as docker/cli reads them."""
        assert argv[0] == "run", argv
        spec = cls()
        i = 1
        while argv[i].startswith("-"):
            option = argv[i]
            if option == "--rm":
                i += 1
                continue
            value = argv[i + 1]
            i += 2
            if option == "--name":
                spec.name = value
            elif option == "--label":
                spec.labels.append(value)
            elif option == "--workdir":
                spec.workdir = value
            elif option == "-e":
                name, sign, given = value.partition("=")
                if sign:
                    spec.environment[name] = given
                elif name in process_env:  # `-e NAME` takes the docker process's value
                    spec.environment[name] = process_env[name]
            elif option == "--entrypoint":
                spec.entrypoint = value
            elif option == "-v":
                source, target = value.split(":")
                spec.volumes.append((source, target))
            else:
                raise AssertionError(f"DockerRun writes no option {option}")
        spec.image = argv[i]
        spec.command = argv[i + 1 :]
        return spec


def read_env_file(text: str) -> dict[str, str]:
    """FileCommandManager's EnvFileKeyValuePairs: NAME=VALUE lines and NAME<<DELIMITER blocks;
    anything else fails the step, as "Unable to process file command"."""
    pairs: dict[str, str] = {}
    lines = text.splitlines(keepends=True)
    i = 0
    while i < len(lines):
        line = lines[i].rstrip("\r\n")
        i += 1
        if not line:
            continue
        equals, heredoc = line.find("="), line.find("<<")
        if equals >= 0 and (heredoc < 0 or equals < heredoc):
            name, _, value = line.partition("=")
            pairs[name] = value
            continue
        assert heredoc >= 0, f"invalid format {line!r}"
        name, _, delimiter = line.partition("<<")
        assert name and delimiter, f"invalid format {line!r}"
        value_lines: list[str] = []
        while True:
            assert i < len(lines), f"matching delimiter not found {delimiter!r}"
            current = lines[i]
            i += 1
            if current.rstrip("\r\n") == delimiter:
                break
            assert current.endswith("\n"), "EOF marker missing new line"
            value_lines.append(current)
        value = "".join(value_lines)
        pairs[name] = value.removesuffix("\n").removesuffix("\r") if value_lines else ""
    return pairs
