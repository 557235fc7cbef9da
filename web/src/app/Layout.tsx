// The frame around every signed-in page: the main navigation (a `nav` landmark whose links the
// end-to-end tests find by name), the language and theme switches, and the account menu.
import { useState, type ReactNode } from "react";
import { useTranslation } from "react-i18next";
import { NavLink, Outlet, useLocation } from "react-router";
import { useAuth } from "../auth/AuthContext";
import { languages } from "../i18n";
import { applyTheme, initialTheme, type Theme } from "./preferences";
import { navItems } from "./routes";

export function Layout() {
  const { t } = useTranslation();
  const [menuOpen, setMenuOpen] = useState(false);
  const location = useLocation();
  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        {t("skipToContent")}
      </a>
      <header className="topbar">
        <button
          type="button"
          className="btn btn-ghost menu-toggle"
          aria-expanded={menuOpen}
          aria-controls="main-nav"
          onClick={() => setMenuOpen((o) => !o)}
        >
          {t("menu")}
        </button>
        <span className="brand">Switchboard</span>
        <div className="topbar-tools">
          <LanguagePicker />
          <ThemeToggle />
          <AccountMenu />
        </div>
      </header>
      <nav id="main-nav" className={menuOpen ? "sidenav open" : "sidenav"} aria-label={t("nav.label")}>
        <ul>
          {navItems.map((item) => (
            <li key={item.to}>
              <NavLink to={item.to} end={item.to === "/"} onClick={() => setMenuOpen(false)}>
                {t(item.label)}
              </NavLink>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" className="content" key={location.pathname.split("/")[1]}>
        <Outlet />
      </main>
    </div>
  );
}

function LanguagePicker() {
  const { t, i18n } = useTranslation();
  return (
    <label className="inline-field">
      <span className="language-label">{t("language")}</span>
      <select value={i18n.resolvedLanguage} onChange={(e) => i18n.changeLanguage(e.target.value)}>
        {languages.map((l) => (
          <option key={l.code} value={l.code}>
            {l.label}
          </option>
        ))}
      </select>
    </label>
  );
}

function ThemeToggle() {
  const { t } = useTranslation();
  const [theme, setTheme] = useState<Theme>(initialTheme);
  const next: Theme = theme === "dark" ? "light" : "dark";
  return (
    <button
      type="button"
      className="btn btn-ghost"
      aria-label={t("theme.switchTo", { theme: t(`theme.${next}`) })}
      onClick={() => {
        applyTheme(next, true);
        setTheme(next);
      }}
    >
      {theme === "dark" ? "☀" : "☾"}
    </button>
  );
}

function AccountMenu() {
  const { t } = useTranslation();
  const { user, logout } = useAuth();
  return (
    <div className="account">
      <NavLink to="/account" className="btn btn-ghost">
        {user ?? t("account.title")}
      </NavLink>
      <button type="button" className="btn btn-ghost" onClick={logout}>
        {t("logout")}
      </button>
    </div>
  );
}

export function PageHeader({ title, actions, children }: { title: string; actions?: ReactNode; children?: ReactNode }) {
  return (
    <div className="page-header">
      <div>
        <h1>{title}</h1>
        {children}
      </div>
      {actions && <div className="page-actions">{actions}</div>}
    </div>
  );
}
