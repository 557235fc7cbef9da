// Child processes of a run (the fakes, the server): started with a line to wait for, and all
// stopped together by stopAll(), which the runner calls on success, failure, timeout and SIGTERM.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, openSync, readFileSync, rmSync, closeSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

const children = new Set();
const tempDirs = new Set();

export function tempDir(prefix) {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

// Starts `cmd args` and resolves with the first stdout match of `ready` (a RegExp) once it
// appears, or rejects when the process exits or `timeoutMs` passes first.
export function startProcess(name, cmd, args, { ready, env, timeoutMs = 20_000, logFile } = {}) {
  const stderr = logFile ? openSync(logFile, "a") : "inherit";
  const child = spawn(cmd, args, {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", stderr],
    detached: false,
  });
  if (typeof stderr === "number") closeSync(stderr);
  const proc = { name, child, stdout: "", logFile };
  children.add(proc);
  child.on("exit", () => children.delete(proc));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(`${name} printed nothing matching ${ready} within ${timeoutMs} ms`), timeoutMs);
    function fail(why) {
      clearTimeout(timer);
      reject(new Error(`${why}; stdout: ${proc.stdout.slice(-2000)}${logTail(logFile)}`));
    }
    child.on("error", (e) => fail(`${name} could not start: ${e.message}`));
    child.on("exit", (code, signal) => fail(`${name} exited (${code ?? signal}) before it was ready`));
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk) => {
      proc.stdout += chunk;
      const m = ready.exec(proc.stdout);
      if (m && !proc.match) {
        proc.match = m;
        clearTimeout(timer);
        resolve(proc);
      }
    });
  });
}

function logTail(file) {
  if (!file) return "";
  try {
    return `\nlog ${file}:\n${readFileSync(file, "utf8").slice(-3000)}`;
  } catch {
    return "";
  }
}

// SIGTERM, then SIGKILL after `graceMs`; resolves with the exit code (null when killed).
export function stopProcess(proc, graceMs = 10_000) {
  const { child } = proc;
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve(code);
    });
    child.kill("SIGTERM");
  });
}

export async function stopAll() {
  await Promise.all([...children].map((p) => stopProcess(p, 5_000)));
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();
}

// Plugins run in bubblewrap unless the machine cannot give one (docs/plugins.md "The sandbox");
// then the server would refuse to start them, so the run falls back to plain child processes.
export function sandboxWorks() {
  const r = spawnSync("bwrap", ["--unshare-all", "--ro-bind", "/", "/", "true"], { stdio: "ignore" });
  return r.status === 0;
}
