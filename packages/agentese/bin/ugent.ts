#!/usr/bin/env node
/**
 * The `ugent` binary: see `ugent --help` and the CLI reference in the
 * package README.
 */
import { main } from "../src/projections/Cli.ts"

main()
