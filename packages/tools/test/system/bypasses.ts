/**
 * The shell spellings that got past the text policy (threat 39), as data, so
 * every entry point (the tool, the CLI, MCP) can run the same list through
 * the real sandbox.
 *
 * `payloads` run a program through a re-spelling that a text policy cannot
 * see: each takes the payload as a command line without quotes, `#` or `/`
 * (the tests use `bash p.sh`, a script they put in the workspace that tries
 * to write outside, read outside, connect to the host's loopback and dump
 * the environment). `spellings` are denied commands written past the denied
 * patterns, run as they are. Both are run with the workspace root as the
 * working directory.
 */

export interface Payload {
  readonly name: string
  /** The command line that runs `payload`. */
  readonly command: (payload: string) => string
  /** What a policy sees in it, as the issue reported it. */
  readonly reported: string
}

export const payloads: ReadonlyArray<Payload> = [
  { name: "subshells in ((…))", reported: "((true) ; (id))", command: (p) => `((true) ; (${p}))` },
  { name: "$((…)) re-read as a subshell", reported: "$((...))", command: (p) => `echo $((${p}) )` },
  {
    name: "arithmetic on a subscript",
    reported: "x='a[$(id)]'; echo $((x))",
    command: (p) => `x='a[$(${p})]'; echo $((x))`
  },
  { name: "printf -v subscript", reported: "printf -v 'a[$(id)]'", command: (p) => `printf -v 'a[$(${p})]' x` },
  { name: "prompt expansion ${x@P}", reported: "${x@P}", command: (p) => `x='$(${p})'; echo \${x@P}` },
  {
    name: "PATH prefix with a planted ls",
    reported: "PATH=.:$PATH ls",
    command: (p) => `printf '%s\\n' '#!/bin/sh' '${p}' > ls && chmod +x ls && PATH=.:$PATH ls`
  },
  {
    name: "BASH_ENV prefix",
    reported: "BASH_ENV=./e.sh bash -c true",
    // The payload's own bash would read BASH_ENV again: the planted file clears it first.
    command: (p) => `printf '%s\\n' 'unset BASH_ENV' '${p}' > e.sh && BASH_ENV=./e.sh bash -c true`
  },
  {
    name: "GIT_CONFIG_* alias",
    reported: "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0='!id' git x",
    command: (p) => `GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0='!${p}' git x`
  },
  {
    name: "awk system()",
    reported: `awk 'BEGIN{system("id")}'`,
    command: (p) => `awk 'BEGIN{system("${p}")}'`
  },
  { name: "sed e flag", reported: "sed 's/.*/id/e'", command: (p) => `echo x | sed 's#.*#${p}#e'` },
  {
    name: "tar checkpoint action",
    reported: "tar --checkpoint-action=exec=id",
    command: (p) => `tar -cf /dev/null --checkpoint=1 --checkpoint-action=exec='${p}' README.md`
  },
  {
    name: "make",
    reported: "make",
    command: (p) => `printf 'all:\\n\\t%s\\n' '${p}' > Makefile && make -s`
  },
  {
    name: "git ls-remote --upload-pack",
    reported: "git ls-remote --upload-pack=id",
    command: (p) => `git ls-remote --upload-pack='${p};false' . 2>/dev/null; true`
  }
]

/** Denied commands in spellings the denied patterns missed; `{outside}` and `{remote}` name places outside the workspace. */
export const spellings: ReadonlyArray<{ readonly name: string; readonly command: string }> = [
  { name: "rm with a glob for /", command: "rm -rf /[a-z]* 2>/dev/null; true" },
  { name: "find -delete from /", command: "find / -mindepth 1 -delete 2>/dev/null; true" },
  { name: "relative path to /etc", command: "echo x >> ../../../../../../etc/hosts" },
  { name: "symbolic chmod", command: "chmod -R go=u / {outside} 2>/dev/null; chmod go=u {outside}/secret.txt" },
  { name: "push --mirror", command: "git push --mirror {remote}" },
  { name: "CDPATH into /etc", command: "CDPATH=/ cd etc && echo x >> hosts" },
  { name: "reading the outside secret", command: "cat {outside}/secret.txt" },
  { name: "reading host files", command: "cat /etc/passwd /etc/shadow /root/.bashrc /root/.profile" },
  { name: "cat .env", command: "cat .env" }
]
