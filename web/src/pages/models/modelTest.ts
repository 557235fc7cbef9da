// Running a model test (docs/api.md "Model tests") and reading its failure. The server answers 502
// or 504 with the kind of failure first ("bad API key: ...", "timeout: ..."), then the provider's
// own words; the console names the kind in plain language and keeps the rest as detail.
import { useMutation } from "@tanstack/react-query";
import { ApiError, post } from "../../api/client";
import type { ModelBody, ModelKind, TestResult } from "./types";

export type FailureKind = "badKey" | "unknownModel" | "rateLimited" | "connection" | "provider" | "timeout";

const prefixes: [string, FailureKind][] = [
  ["bad API key", "badKey"],
  ["unknown model", "unknownModel"],
  ["rate limited or out of quota", "rateLimited"],
  ["connection failed", "connection"],
  ["provider error", "provider"],
  ["timeout", "timeout"],
];

export interface TestFailure {
  kind: FailureKind | null; // null: not a provider failure (a refused form, a lost server)
  detail: string;
}

export function readTestFailure(error: unknown): TestFailure {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof ApiError && (error.status === 502 || error.status === 504)) {
    for (const [prefix, kind] of prefixes) {
      if (message.startsWith(prefix)) {
        return { kind, detail: message.slice(prefix.length).replace(/^:\s*/, "") };
      }
    }
    return { kind: "provider", detail: message };
  }
  return { kind: null, detail: message };
}

// `uuid` "_" tests the unsaved model described by `draft`; nothing is stored.
export function useModelTest(kind: ModelKind) {
  return useMutation({
    mutationFn: ({ uuid, input, draft }: { uuid: string; input: string; draft?: ModelBody }) =>
      post<TestResult>(`/provider/models/${kind}/${uuid}/test`, {
        ...(draft ?? {}),
        [kind === "llm" ? "prompt" : "text"]: input,
      }),
  });
}
