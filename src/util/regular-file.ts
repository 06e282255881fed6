// Reading a file a script or a flag names, as untrusted: a regular file of bounded size, opened without waiting (a FIFO never hangs cadre).
import { Buffer } from "node:buffer";
import { constants } from "node:fs";
import { open } from "node:fs/promises";
import process from "node:process";
import { CadreError } from "../errors.ts";

/** O_NONBLOCK does not exist on Windows, where a named pipe is not opened by path anyway. */
const OPEN_FLAGS = constants.O_RDONLY | (process.platform === "win32" ? 0 : constants.O_NONBLOCK);

/** A file that is there but not one to read: a device, a FIFO, a folder, or too large. */
export class UnfitFileError extends CadreError {
  readonly reason: "not_regular" | "too_large";

  constructor(reason: "not_regular" | "too_large", message: string) {
    super("FILE_UNFIT", message);
    this.reason = reason;
  }
}

/** The file's text (UTF-8); an UnfitFileError when it is not a regular file of at most `maxBytes`, else the file system's error (ENOENT…). */
export async function readRegularFile(path: string, maxBytes: number): Promise<string> {
  const handle = await open(path, OPEN_FLAGS);
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new UnfitFileError("not_regular", `${path} is not a regular file`);
    if (info.size > maxBytes) throw new UnfitFileError("too_large", `${path} exceeds ${maxBytes} bytes`);
    // At most its size when it was opened: a file that grows meanwhile is read up to there.
    const bytes = Buffer.alloc(info.size);
    const { bytesRead } = await handle.read(bytes, 0, bytes.length, 0);
    return bytes.subarray(0, bytesRead).toString("utf8");
  } finally {
    await handle.close();
  }
}
