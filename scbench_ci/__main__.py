from scbench_ci.main import main

raise SystemExit(main())
