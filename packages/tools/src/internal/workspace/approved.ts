/**
 * The bytes a person approved a call against: for each file the call may
 * write (relative to the root), the SHA-256 it had when the call was shown
 * (`null`: absent). A write of this process checks it under the file's lock,
 * just before its rename, so the approved call never writes over other bytes.
 *
 * @internal
 */
import { Context } from "effect"

export const ApprovedFiles = Context.Reference<ReadonlyMap<string, string | null> | undefined>(
  "ugent/tools/Workspace/ApprovedFiles",
  { defaultValue: () => undefined }
)
