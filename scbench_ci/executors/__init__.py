"""Where tests run. Each executor module exposes one class with the `Executor` shape;
`choice` names them and makes the one a run uses."""
