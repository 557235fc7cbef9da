// An on/off switch for state the server holds (a bot or a plugin enabled). It shows the server's
// value; while the change is in flight it shows the asked-for position as busy (aria-disabled, so
// keyboard focus stays on it) and ignores further toggles; a refusal is shown in the server's words,
// inline where there is room or as a toast, and the switch stays where the server says it is.
import * as Switch from "@radix-ui/react-switch";
import { useId, useState } from "react";
import { toast } from "sonner";
import { errorMessage } from "./PageState";

export function ServerSwitch({
  checked,
  onToggle,
  label,
  visibleLabel,
  description,
  busyText,
  failureText,
  inlineError,
  className,
}: {
  checked: boolean;
  onToggle: (next: boolean) => Promise<unknown>;
  label: string; // the accessible name; drawn beside the switch when visibleLabel
  visibleLabel?: boolean;
  description?: string; // read after the name (e.g. which bot)
  busyText?: (next: boolean) => string;
  failureText: (message: string) => string;
  inlineError?: boolean;
  className?: string;
}) {
  const id = useId();
  const [pending, setPending] = useState<boolean | null>(null);
  const [error, setError] = useState<unknown>(null);
  const shown = pending ?? checked;
  return (
    <span className={`server-switch ${className ?? ""}`}>
      <Switch.Root
        id={id}
        className="switch"
        checked={shown}
        aria-disabled={pending !== null || undefined}
        aria-busy={pending !== null || undefined}
        aria-label={visibleLabel ? undefined : label}
        aria-describedby={description ? `${id}-desc` : undefined}
        onCheckedChange={async (next) => {
          if (pending !== null) return;
          setPending(next);
          setError(null);
          try {
            await onToggle(next);
          } catch (e) {
            setError(e);
            if (!inlineError) toast.error(failureText(errorMessage(e)));
          } finally {
            setPending(null);
          }
        }}
      >
        <Switch.Thumb className="switch-thumb" />
      </Switch.Root>
      {visibleLabel && <label htmlFor={id}>{label}</label>}
      {description && (
        <span id={`${id}-desc`} className="visually-hidden">
          {description}
        </span>
      )}
      {pending !== null && busyText && (
        <span className="muted server-switch-busy" role="status">
          {busyText(pending)}
        </span>
      )}
      {inlineError && error != null && (
        <span className="field-error" role="alert">
          {failureText(errorMessage(error))}
        </span>
      )}
    </span>
  );
}
