// Asks before leaving a page with unsaved changes. The console uses <BrowserRouter>, where
// react-router's useBlocker is not available (it needs a data router), so this guards what it can:
// in-app links (intercepted before the router sees the click, confirmed in an in-page dialog) and
// reloads or closing the tab (the browser's own beforeunload prompt). The Back button is not
// guarded.
import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { useNavigate } from "react-router";
import { Dialog } from "../../components/Dialog";

export function useLeaveGuard(when: boolean) {
  const { t } = useTranslation("pipelines");
  const navigate = useNavigate();
  const [target, setTarget] = useState<string | null>(null);

  useEffect(() => {
    if (!when) return;
    const onBeforeUnload = (e: BeforeUnloadEvent) => {
      e.preventDefault();
      e.returnValue = "";
    };
    // Capture phase on the document runs before React's listeners on the root element.
    const onClick = (e: MouseEvent) => {
      if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
      const link = (e.target as Element | null)?.closest?.("a[href]") as HTMLAnchorElement | null;
      if (!link || (link.target && link.target !== "_self") || link.hasAttribute("download")) return;
      const url = new URL(link.href, window.location.href);
      if (url.origin !== window.location.origin) return;
      if (url.pathname === window.location.pathname && url.search === window.location.search) return;
      e.preventDefault();
      e.stopPropagation();
      setTarget(url.pathname + url.search + url.hash);
    };
    window.addEventListener("beforeunload", onBeforeUnload);
    document.addEventListener("click", onClick, true);
    return () => {
      window.removeEventListener("beforeunload", onBeforeUnload);
      document.removeEventListener("click", onClick, true);
    };
  }, [when]);

  const dialog = (
    <Dialog open={target !== null} onOpenChange={(o) => !o && setTarget(null)} title={t("leave.title")}>
      <p>{t("leave.body")}</p>
      <div className="dialog-actions">
        <button type="button" className="btn btn-primary" onClick={() => setTarget(null)}>
          {t("leave.stay")}
        </button>
        <button
          type="button"
          className="btn btn-danger"
          onClick={() => {
            const to = target;
            setTarget(null);
            if (to) navigate(to);
          }}
        >
          {t("leave.leave")}
        </button>
      </div>
    </Dialog>
  );
  return dialog;
}
