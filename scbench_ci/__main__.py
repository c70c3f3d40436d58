from scbench_ci.cli.main import main

raise SystemExit(main())
