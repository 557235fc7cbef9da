// What a model test found: the reply (or the embedding's size) with its latency, or what went
// wrong, its kind first in plain words. Announced to screen readers as it arrives.
import { useTranslation } from "react-i18next";
import { readTestFailure } from "./modelTest";
import type { TestResult } from "./types";

export function TestOutcome({
  pending,
  result,
  error,
}: {
  pending: boolean;
  result: TestResult | undefined;
  error: unknown;
}) {
  const { t } = useTranslation("models");
  if (pending) {
    return (
      <div className="model-test" role="status" aria-live="polite">
        <span className="spinner" aria-hidden="true" />
        {t("test.running")}
      </div>
    );
  }
  if (error) {
    const failure = readTestFailure(error);
    return (
      <div className="model-test model-test-failed" role="alert">
        <strong>{failure.kind ? t(`test.kind.${failure.kind}`) : t("test.failed")}</strong>
        {failure.kind && <span className="muted">{t(`test.hint.${failure.kind}`)}</span>}
        {failure.detail && <code className="model-test-detail">{failure.detail}</code>}
      </div>
    );
  }
  if (!result) return null;
  return (
    <div className="model-test model-test-ok" role="status" aria-live="polite">
      {"reply" in result ? (
        <>
          <strong>{t("test.reply")}</strong>
          <q className="model-test-reply">{result.reply}</q>
        </>
      ) : (
        <strong>{t("test.dimensions", { count: result.dimensions })}</strong>
      )}
      <span className="muted">
        {t("test.latency", { ms: result.latency_ms })}
        {"usage" in result && result.usage ? ` · ${t("test.tokens", { count: result.usage.total_tokens })}` : ""}
      </span>
    </div>
  );
}
