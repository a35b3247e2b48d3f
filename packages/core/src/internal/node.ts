/**
 * The Node.js the packages need, checked when they are loaded: an old Node
 * gets the one line the `ugent` binary prints (bin/ugent.js), not a stack
 * trace from deep inside a dependency (`node:sqlite` and the module hooks
 * are missing or experimental before 22.19). Nothing of the packages can run
 * there, so the process ends as the binary's does.
 *
 * @internal
 */
const [major = 0, minor = 0] = (globalThis.process?.versions?.node ?? "99").split(".").map(Number)
if (major < 22 || (major === 22 && minor < 19)) {
  process.stderr.write(
    `ugent: needs Node.js 22.19 or newer, and this is Node.js ${process.versions.node}; install a newer Node (https://nodejs.org) and run it again.\n`
  )
  process.exit(1)
}

export {}
