from rag.cli.main import main

raise SystemExit(main())
