import * as Progress from "@radix-ui/react-progress";
import { useId, useRef, useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { FormError } from "../../components/PageState";
import { uploadPackage } from "./api";
import { formatBytes } from "./format";
import type { TrackedTask } from "./useTrackedTasks";

// A plugin package (zip) from the person's disk. The bytes' progress is shown while they travel;
// the install itself is a task the parent follows.
export function UploadPackage({ onStarted }: { onStarted: (task: TrackedTask) => void }) {
  const { t } = useTranslation("plugins");
  const id = useId();
  const input = useRef<HTMLInputElement>(null);
  const [file, setFile] = useState<File | null>(null);
  const [sent, setSent] = useState<{ loaded: number; total: number } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const busy = sent !== null;

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (!file) return;
    setError(null);
    setSent({ loaded: 0, total: file.size });
    try {
      const started = await uploadPackage(file, (loaded, total) => setSent({ loaded, total }));
      onStarted({ id: started.task_id, subject: file.name });
      setFile(null);
      if (input.current) input.current.value = "";
    } catch (err) {
      setError(err);
    } finally {
      setSent(null);
    }
  }

  const percent = sent && sent.total > 0 ? Math.round((sent.loaded / sent.total) * 100) : 0;
  return (
    <form className="stack" onSubmit={submit} aria-busy={busy || undefined}>
      <div className="field">
        <label htmlFor={`${id}-file`}>{t("upload.file")}</label>
        <input
          ref={input}
          id={`${id}-file`}
          type="file"
          accept=".zip,application/zip,application/x-zip-compressed"
          aria-describedby={`${id}-help`}
          disabled={busy}
          onChange={(e) => {
            setError(null);
            setFile(e.target.files?.[0] ?? null);
          }}
        />
        <p id={`${id}-help`} className="field-help">
          {t("upload.help")}
        </p>
      </div>
      {sent && (
        <div className="task-progress">
          <Progress.Root className="progress" value={percent} aria-label={t("upload.sending", { file: file?.name })}>
            <Progress.Indicator className="progress-indicator" style={{ transform: `translateX(-${100 - percent}%)` }} />
          </Progress.Root>
          <p className="muted" aria-live="polite">
            {/* Once every byte is there the server checks the package before it answers. */}
            {sent.total > 0 && sent.loaded >= sent.total
              ? t("upload.checking")
              : t("upload.sent", { sent: formatBytes(sent.loaded), total: formatBytes(sent.total) })}
          </p>
        </div>
      )}
      <FormError error={error} />
      <div className="form-actions">
        <button type="submit" className="btn btn-primary" disabled={!file || busy}>
          {busy ? t("upload.uploading") : t("upload.install")}
        </button>
      </div>
    </form>
  );
}
