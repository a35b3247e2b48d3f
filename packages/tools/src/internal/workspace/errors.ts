/**
 * The typed errors of the workspace jail. They live here, apart from
 * `Workspace.ts`, so the machinery in this folder can raise them without an
 * import cycle; `Workspace.ts` re-exports every one of them.
 *
 * @internal
 */
import { ToolError } from "@ugent/core"
import { Schema } from "effect"

/** A path as it may be shown in a message: control characters escaped, so a NUL byte is visible. */
export const shown = (path: string): string =>
  // biome-ignore lint/suspicious/noControlCharactersInRegex: escaping control characters is the point
  path.replace(/[\u0000-\u001f\u007f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`)

/**
 * The path cannot name a file at all: it holds a NUL byte, is empty, loops
 * through symbolic links, is too long, or is a link to nothing.
 *
 * @category errors
 * @since 0.1.0
 */
export class InvalidPath extends Schema.TaggedError<InvalidPath>()("InvalidPath", {
  path: Schema.String,
  reason: Schema.Literals(["nul-byte", "empty", "symlink-loop", "too-long", "dangling-symlink"])
}) {
  static readonly kind: ToolError.Kind = "invalid_input"
  override get message(): string {
    const p = shown(this.path)
    const messages: Record<typeof this.reason, string> = {
      "nul-byte": `The path ${p} contains a NUL byte, which no file name may hold. Remove it and call again.`,
      empty: `The path is empty. Give a file path relative to the workspace root (for example "src/index.ts"), or "." for the root.`,
      "symlink-loop": `The path ${p} goes through symbolic links that loop. Use a path without the looping link.`,
      "too-long": `The path ${p} is too long for the file system. Use a shorter path.`,
      "dangling-symlink": `${p} is a symbolic link whose target does not exist. File tools never create files through links; write to the target's own path inside the workspace instead.`
    }
    return messages[this.reason]
  }
}

/**
 * The path, or what it resolves to through symbolic links, is not inside the
 * workspace root. Defined once in `@ugent/core` (the `Sandboxed` wrapper
 * raises it too); re-exported here with the other jail errors.
 *
 * @category errors
 * @since 0.1.0
 */
export const OutsideWorkspace = ToolError.OutsideWorkspace

/**
 * @category errors
 * @since 0.1.0
 */
export type OutsideWorkspace = ToolError.OutsideWorkspace

/**
 * The path matches a blocked name of the workspace policy (secrets, private
 * keys, credentials, `.git/` internals), by its own name, through a link's
 * name, or through the target a link points to.
 *
 * @category errors
 * @since 0.1.0
 */
export class BlockedPath extends Schema.TaggedError<BlockedPath>()("BlockedPath", {
  path: Schema.String,
  rule: Schema.String,
  via: Schema.Literals(["path", "link", "target"])
}) {
  static readonly kind: ToolError.Kind = "denied"
  override get message(): string {
    const how =
      this.via === "path" ? "" : this.via === "link" ? " through a symbolic link's name" : " through a link's target"
    return `${shown(this.path)} is blocked by the workspace policy (rule "${this.rule}"${how}): secrets, private keys, credentials and .git internals are never read or written by file tools. Work with other files; use the git tools for repository state.`
  }
}

/**
 * Nothing exists at the path.
 *
 * @category errors
 * @since 0.1.0
 */
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", {
  path: Schema.String,
  expected: Schema.Literals(["file", "directory", "any"])
}) {
  static readonly kind: ToolError.Kind = "not_found"
  override get message(): string {
    const what = this.expected === "directory" ? "Directory" : this.expected === "file" ? "File" : "Path"
    return `${what} not found: ${shown(this.path)}. Check the path with file.list or file.glob.`
  }
}

/**
 * The kinds of non-regular files a tool may meet.
 *
 * @category models
 * @since 0.1.0
 */
export const FileKind = Schema.Literals([
  "file",
  "directory",
  "fifo",
  "character-device",
  "block-device",
  "socket",
  "symlink",
  "unknown"
])

/**
 * @category models
 * @since 0.1.0
 */
export type FileKind = typeof FileKind.Type

/**
 * A file was expected and the path is a directory, a FIFO, a device or a
 * socket. Only regular files are read or written.
 *
 * @category errors
 * @since 0.1.0
 */
export class NotAFile extends Schema.TaggedError<NotAFile>()("NotAFile", {
  path: Schema.String,
  kind: FileKind
}) {
  static readonly kind: ToolError.Kind = "invalid_input"
  override get message(): string {
    const p = shown(this.path)
    if (this.kind === "directory") {
      return `${p} is a directory, not a file. List it with file.list, or find files in it with file.glob.`
    }
    return `${p} is a ${this.kind.replace("-", " ")}, not a regular file; only regular files are read or written (a pipe or device could block or never end). Choose a regular file.`
  }
}

/**
 * A directory was expected and the path is a file (or something else).
 *
 * @category errors
 * @since 0.1.0
 */
export class NotADirectory extends Schema.TaggedError<NotADirectory>()("NotADirectory", {
  path: Schema.String,
  kind: FileKind
}) {
  static readonly kind: ToolError.Kind = "invalid_input"
  override get message(): string {
    const p = shown(this.path)
    return this.kind === "file"
      ? `${p} is a file, not a directory. Read it with file.read, or list its parent directory with file.list.`
      : `${p} is a ${this.kind.replace("-", " ")}, not a directory. List a directory of the workspace instead.`
  }
}

/**
 * The file is not UTF-8 text: a NUL byte or invalid UTF-8 in its first
 * 8 KB, or invalid UTF-8 later on.
 *
 * @category errors
 * @since 0.1.0
 */
export class BinaryFile extends Schema.TaggedError<BinaryFile>()("BinaryFile", {
  path: Schema.String,
  size: Schema.Number,
  reason: Schema.Literals(["nul-byte", "invalid-utf8"])
}) {
  static readonly kind: ToolError.Kind = "invalid_input"
  override get message(): string {
    const why = this.reason === "nul-byte" ? "it contains NUL bytes" : "it is not valid UTF-8"
    return `${shown(this.path)} looks like a binary file (${why}); file tools show and edit UTF-8 text only. Choose a text file, or inspect it with another tool.`
  }
}

/**
 * The file is over the byte limit of the operation (or grew past it while
 * being read).
 *
 * @category errors
 * @since 0.1.0
 */
export class FileTooLarge extends Schema.TaggedError<FileTooLarge>()("FileTooLarge", {
  path: Schema.String,
  /** The size seen: at least this many bytes. */
  size: Schema.Number,
  limit: Schema.Number
}) {
  static readonly kind: ToolError.Kind = "invalid_input"
  override get message(): string {
    return `${shown(this.path)} is too large: at least ${this.size} bytes, over the limit of ${this.limit} bytes. Search it with search.grep for the part you need instead of reading it whole.`
  }
}

/**
 * A create found the file already there. Creation is exclusive.
 *
 * @category errors
 * @since 0.1.0
 */
export class AlreadyExists extends Schema.TaggedError<AlreadyExists>()("AlreadyExists", {
  path: Schema.String
}) {
  static readonly kind: ToolError.Kind = "conflict"
  override get message(): string {
    return `${shown(this.path)} already exists. To replace it, read it with file.read and pass the proof it returns to file.write; to change part of it, use file.edit.`
  }
}

/**
 * The path changed while it was being opened (replaced, moved, deleted, or
 * turned into a link): the descriptor did not match what was checked. The
 * operation did nothing; trying again is safe.
 *
 * @category errors
 * @since 0.1.0
 */
export class ConcurrentChange extends Schema.TaggedError<ConcurrentChange>()("ConcurrentChange", {
  path: Schema.String,
  retryable: Schema.Boolean
}) {
  static readonly kind: ToolError.Kind = "conflict"
  override get message(): string {
    return `${shown(this.path)} changed while it was being opened (replaced, moved or turned into a link), so nothing was done. Try again; if it keeps happening, something else is modifying the workspace.`
  }
}

/**
 * A file an approved call writes no longer holds the bytes the person
 * approved the call against (checked under the file's lock, just before the
 * write): nothing was written. The call must be approved again, on the file
 * as it is now.
 *
 * @category errors
 * @since 0.2.0
 */
export class ChangedSinceApproval extends Schema.TaggedError<ChangedSinceApproval>()("ChangedSinceApproval", {
  path: Schema.String
}) {
  static readonly kind: ToolError.Kind = "conflict"
  override get message(): string {
    return `${shown(this.path)} changed after this call was approved, so nothing was written: the approval covers the file as it was shown. Make the call again to be shown the new diff, and have it approved.`
  }
}

/**
 * Any other failure of the file system: permission denied, no space left, a
 * read-only file system, an I/O error. `code` is the system's code.
 *
 * @category errors
 * @since 0.1.0
 */
export class FileSystemError extends Schema.TaggedError<FileSystemError>()("FileSystemError", {
  path: Schema.String,
  operation: Schema.String,
  code: Schema.String,
  retryable: Schema.Boolean
}) {
  static readonly kind: ToolError.Kind = "failed"
  override get message(): string {
    const texts: Record<string, string> = {
      EACCES: "permission denied. Choose a file the agent may access",
      EPERM: "operation not permitted. Choose a file the agent may access",
      ENOSPC: "no space left on the device. Free some space, then retry",
      EDQUOT: "disk quota exceeded. Free some space, then retry",
      EROFS: "the file system is read-only. Only read from it",
      EMFILE: "too many open files. Retry in a moment",
      ENFILE: "too many open files. Retry in a moment",
      EBUSY: "the file is busy. Retry in a moment",
      EAGAIN: "the resource is temporarily unavailable. Retry in a moment",
      EIO: "an input/output error. Retry, and report it if it persists",
      EISDIR: "it is a directory. Use file.list on it",
      ENOTDIR: "a part of the path is not a directory. Check the path with file.list",
      EXDEV: "it crosses file systems. Choose a path on the same file system"
    }
    const text = texts[this.code] ?? `the system reported ${this.code}. Check the path and retry`
    return `Could not ${this.operation} ${shown(this.path)}: ${text}.`
  }
}

/**
 * ugent's own state folder (`.ugent` under the workspace root) or a file in
 * it is not what ugent made: a symbolic link, not a directory or not a
 * regular file, owned by another user, open to others, or not a key. Nothing
 * was read or written through it.
 *
 * @category errors
 * @since 0.2.0
 */
export class StateRefused extends Schema.TaggedError<StateRefused>()("StateRefused", {
  path: Schema.String,
  reason: Schema.Literals([
    "link",
    "not-a-directory",
    "not-a-file",
    "not-owned",
    "writable-by-others",
    "readable-by-others",
    "malformed"
  ])
}) {
  static readonly kind: ToolError.Kind = "denied"
  override get message(): string {
    const p = shown(this.path)
    const messages: Record<typeof this.reason, string> = {
      link: `${p} is a symbolic link, and ugent keeps its state only in real files inside the workspace (a planted link could send it elsewhere). Remove the link (rm ${p}) and run again; ugent makes what it needs itself.`,
      "not-a-directory": `${p} is not a directory, so ugent cannot keep its state there. Move it away and run again; ugent makes the folder itself.`,
      "not-a-file": `${p} is not a regular file (a directory, pipe or device), so ugent will not use it. Remove it and run again; ugent makes what it needs itself.`,
      "not-owned": `${p} belongs to another user, so ugent will not trust it (whoever owns it controls what ugent keeps there). Remove it (or run ugent as its owner); ugent makes a new one.`,
      "writable-by-others": `${p} can be written by other users, who could replace what ugent keeps there. Run chmod o-w ${p}, or remove it and let ugent make it again.`,
      "readable-by-others": `${p} can be read by other users (it must be owner-only, mode 0600): whoever read it can forge read proofs. Delete it (rm ${p}) and run again; ugent makes a new key. Do not just chmod it: a key others could read, or that came with the files, is not secret.`,
      malformed: `${p} is not a key ugent made (it must hold at least 32 random bytes in hex). Delete it (rm ${p}) and run again; ugent makes a new key.`
    }
    return messages[this.reason]
  }
}

/**
 * A write was refused because it could not be taken back: the content before
 * or after it is larger than the checkpoint store keeps for one file. Nothing
 * was written.
 *
 * @category errors
 * @since 0.3.0
 */
export class CheckpointRefused extends Schema.TaggedError<CheckpointRefused>()("CheckpointRefused", {
  path: Schema.String,
  reason: Schema.Literals(["too-large"]),
  size: Schema.Number,
  limit: Schema.Number
}) {
  static readonly kind: ToolError.Kind = "invalid_input"
  override get message(): string {
    return `${shown(this.path)} was not written: its content (${this.size} bytes before or after the write) is over the ${this.limit} bytes the checkpoint store keeps of one file, so the write could not be taken back. Write a smaller file, or ask the operator to raise the checkpoint cap (checkpoints.maxFileBytes).`
  }
}

/**
 * No checkpoint with that id: never made, or dropped to keep the store
 * under its size cap.
 *
 * @category errors
 * @since 0.3.0
 */
export class CheckpointNotFound extends Schema.TaggedError<CheckpointNotFound>()("CheckpointNotFound", {
  id: Schema.String
}) {
  static readonly kind: ToolError.Kind = "not_found"
  override get message(): string {
    return `No checkpoint ${shown(this.id)} (never made, or dropped when the store reached its size cap). List them with self.tools.checkpoint.list and pass one of their ids as "to".`
  }
}

/**
 * A restore was refused and nothing was changed: a file changed since the
 * checkpoints it would undo (by hash; pass proofs of reading the current
 * content to overwrite it), is now a symbolic link, a directory or another
 * kind of file, lies outside the workspace or under a blocked name, was too
 * large to keep, or its kept copy is damaged; or another restore of this
 * workspace is under way.
 *
 * @category errors
 * @since 0.3.0
 */
export class RestoreRefused extends Schema.TaggedError<RestoreRefused>()("RestoreRefused", {
  to: Schema.String,
  reason: Schema.Literals([
    "changed",
    "symlink",
    "directory",
    "not-a-file",
    "outside",
    "blocked",
    "uncaptured",
    "damaged",
    "busy",
    "concurrent-change"
  ]),
  files: Schema.Array(Schema.String)
}) {
  static readonly kind: ToolError.Kind = "conflict"
  override get message(): string {
    const names = this.files.map(shown).join(", ")
    const none = " Nothing was restored."
    const messages: Record<typeof this.reason, string> = {
      changed: `Cannot restore to ${this.to}: ${names} changed since (the content on disk is not what the checkpoints left), and restoring would lose that change. Read each with world.tools.file.read and pass the proofs as "proofs" to restore anyway, or leave them and restore to a later checkpoint.${none}`,
      symlink: `Cannot restore to ${this.to}: ${names} is now a symbolic link, and restore never writes through links. Remove or rename the link, then restore again.${none}`,
      directory: `Cannot restore to ${this.to}: ${names} is now a directory. Move it away, then restore again.${none}`,
      "not-a-file": `Cannot restore to ${this.to}: ${names} is now not a regular file (a pipe, socket or device). Remove it, then restore again.${none}`,
      outside: `Cannot restore to ${this.to}: ${names} now leads outside the workspace (a directory on its way became a link). Restore never writes outside; remove the link, then restore again.${none}`,
      blocked: `Cannot restore to ${this.to}: ${names} is blocked by the workspace policy, and restore writes only what file tools may write.${none}`,
      uncaptured: `Cannot restore to ${this.to}: the content of ${names} was too large to keep, so it cannot be put back. Restore to a later checkpoint.${none}`,
      damaged: `Cannot restore to ${this.to}: the kept copy of ${names} no longer has the content it was stored with. Restore to a later checkpoint.${none}`,
      busy: `Cannot restore to ${this.to}: another restore of this workspace is under way. Wait for it, list the checkpoints again, then restore.${none}`,
      "concurrent-change": `Cannot restore to ${this.to}: ${names} changed while the restore was writing, so every file was put back as it was before the restore. Try again.${none}`
    }
    return messages[this.reason]
  }
}
