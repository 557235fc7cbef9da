import { useState } from "react";
import { useForm } from "react-hook-form";
import { useTranslation } from "react-i18next";
import { Link, Navigate, useLocation, useNavigate } from "react-router";
import { useAccountInfo, useAuth } from "../../auth/AuthContext";
import { FormError, Loading } from "../../components/PageState";
import { AuthFrame } from "./AuthFrame";

export function LoginPage() {
  const { t } = useTranslation("auth");
  const { login, token, expired } = useAuth();
  const account = useAccountInfo();
  const navigate = useNavigate();
  const location = useLocation();
  const from = (location.state as { from?: string } | null)?.from ?? "/";
  const [error, setError] = useState<unknown>(null);
  const { register, handleSubmit, formState } = useForm<{ user: string; password: string }>();
  if (account.isPending) return <Loading />;
  if (account.data && !account.data.initialized) return <Navigate to="/setup" replace />;
  if (token) return <Navigate to={from} replace />;
  return (
    <AuthFrame title={t("login.title")}>
      {expired && <p className="notice">{t("login.expired")}</p>}
      <form
        onSubmit={handleSubmit(async (v) => {
          setError(null);
          try {
            await login(v.user, v.password);
            navigate(from, { replace: true });
          } catch (e) {
            setError(e);
          }
        })}
      >
        <div className="field">
          <label htmlFor="login-user">{t("user")}</label>
          <input id="login-user" autoComplete="username" required {...register("user", { required: true })} />
        </div>
        <div className="field">
          <label htmlFor="login-password">{t("password")}</label>
          <input
            id="login-password"
            type="password"
            autoComplete="current-password"
            required
            {...register("password", { required: true })}
          />
        </div>
        <FormError error={error} />
        <button type="submit" className="btn btn-primary" disabled={formState.isSubmitting}>
          {t("login.submit")}
        </button>
      </form>
      <p className="muted">
        <Link to="/reset-password">{t("login.forgot")}</Link>
      </p>
    </AuthFrame>
  );
}
