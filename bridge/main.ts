#!/usr/bin/env node
process.stderr.write('svc-bridge: not built yet (see issue 5)\n');
process.exit(2);
