#!/usr/bin/env node
process.stderr.write('svc-relay: not built yet (see issue 3)\n');
process.exit(2);
