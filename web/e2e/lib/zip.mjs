// The example plugin as a package: a zip with manifest.yaml at its root (docs/plugins.md), made
// with Debian's `zip`, or Python's zipfile where `zip` is not installed.
import { spawnSync } from "node:child_process";
import path from "node:path";

export function zipDirectory(dir, outFile) {
  const zip = spawnSync("zip", ["-q", "-r", "-X", outFile, ".", "-x", "__pycache__/*", "*.pyc"], { cwd: dir });
  if (zip.error === undefined && zip.status === 0) return outFile;
  const script = `
import os, sys, zipfile
src, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    for root, dirs, files in os.walk(src):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for f in files:
            full = os.path.join(root, f)
            z.write(full, os.path.relpath(full, src))
`;
  const py = spawnSync("python3", ["-c", script, dir, path.resolve(outFile)]);
  if (py.status !== 0) throw new Error(`could not zip ${dir}: ${py.stderr?.toString() || py.error}`);
  return outFile;
}
