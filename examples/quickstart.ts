import { hello } from "@ugent/core"

console.log(hello(process.version))
