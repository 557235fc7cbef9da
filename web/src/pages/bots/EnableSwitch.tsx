// A bot's on/off switch (the end-to-end tests find it by the name "Enable"). It shows the state
// the server holds: while the PUT is in flight the switch is busy, and a refusal is shown in the
// server's words and the switch stays where the server says it is.
import * as Switch from "@radix-ui/react-switch";
import { useId, useState } from "react";
import { useTranslation } from "react-i18next";
import { toast } from "sonner";
import type { Bot } from "../../api/types";
import { errorMessage } from "../../components/PageState";
import { setBotEnabled, useInvalidateBots } from "./queries";

export function EnableSwitch({ bot, showError }: { bot: Pick<Bot, "uuid" | "name" | "enable">; showError?: boolean }) {
  const { t } = useTranslation("bots");
  const invalidate = useInvalidateBots();
  const [pending, setPending] = useState<boolean | null>(null);
  const [error, setError] = useState<unknown>(null);
  const descId = useId();
  const checked = pending ?? bot.enable;
  return (
    <span className="bot-enable">
      <Switch.Root
        className="switch"
        checked={checked}
        disabled={pending !== null}
        aria-label={t("enable")}
        aria-describedby={descId}
        onCheckedChange={async (enable) => {
          setPending(enable);
          setError(null);
          try {
            await setBotEnabled(bot.uuid, enable);
            await invalidate(bot.uuid);
          } catch (e) {
            setError(e);
            // Where the switch has room for the message (the bot page) it shows there; in the list, a toast.
            if (!showError) toast.error(t("enableFailed", { name: bot.name, message: errorMessage(e) }));
          } finally {
            setPending(null);
          }
        }}
      >
        <Switch.Thumb className="switch-thumb" />
      </Switch.Root>
      <span id={descId} className="visually-hidden">
        {t("enableDescription", { name: bot.name })}
      </span>
      {showError && error != null && (
        <span className="field-error" role="alert">
          {errorMessage(error)}
        </span>
      )}
    </span>
  );
}
