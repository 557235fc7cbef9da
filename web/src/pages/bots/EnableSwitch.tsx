// A bot's on/off switch (the end-to-end tests find it by the name "Enable").
import { useTranslation } from "react-i18next";
import type { Bot } from "../../api/types";
import { ServerSwitch } from "../../components/ServerSwitch";
import { setBotEnabled, useInvalidateBots } from "./queries";

export function EnableSwitch({ bot, showError }: { bot: Pick<Bot, "uuid" | "name" | "enable">; showError?: boolean }) {
  const { t } = useTranslation("bots");
  const invalidate = useInvalidateBots();
  return (
    <ServerSwitch
      className="bot-enable"
      checked={bot.enable}
      label={t("enable")}
      description={t("enableDescription", { name: bot.name })}
      // Where the switch has room for the message (the bot page) it shows there; in the list, a toast.
      inlineError={showError}
      failureText={(message) => (showError ? message : t("enableFailed", { name: bot.name, message }))}
      onToggle={async (enable) => {
        await setBotEnabled(bot.uuid, enable);
        await invalidate(bot.uuid);
      }}
    />
  );
}
