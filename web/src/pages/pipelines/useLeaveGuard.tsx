// Asks before leaving a page with unsaved changes: any navigation inside the console (links,
// Back and Forward) through react-router's useBlocker, confirmed in an in-page dialog; a reload or
// closing the tab through the browser's own beforeunload prompt.
import { useEffect } from "react";
import { useTranslation } from "react-i18next";
import { useBlocker } from "react-router";
import { Dialog } from "../../components/Dialog";

export function useLeaveGuard(when: boolean) {
  const { t } = useTranslation("pipelines");
  const blocker = useBlocker(
    ({ currentLocation, nextLocation }) => when && currentLocation.pathname !== nextLocation.pathname,
  );

  useEffect(() => {
    if (!when) return;
    const onBeforeUnload = (e: BeforeUnloadEvent) => {
      e.preventDefault();
      e.returnValue = "";
    };
    window.addEventListener("beforeunload", onBeforeUnload);
    return () => window.removeEventListener("beforeunload", onBeforeUnload);
  }, [when]);

  return (
    <Dialog
      open={blocker.state === "blocked"}
      onOpenChange={(o) => !o && blocker.state === "blocked" && blocker.reset()}
      title={t("leave.title")}
    >
      <p>{t("leave.body")}</p>
      <div className="dialog-actions">
        <button type="button" className="btn btn-primary" onClick={() => blocker.reset?.()}>
          {t("leave.stay")}
        </button>
        <button type="button" className="btn btn-danger" onClick={() => blocker.proceed?.()}>
          {t("leave.leave")}
        </button>
      </div>
    </Dialog>
  );
}
