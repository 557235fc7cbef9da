import { useState } from "react";
import { useForm } from "react-hook-form";
import { useTranslation } from "react-i18next";
import { Link } from "react-router";
import { api } from "../../api/client";
import { FormError } from "../../components/PageState";
import { AuthFrame } from "./AuthFrame";

interface ResetForm {
  user: string;
  recovery_key: string;
  new_password: string;
}

// The recovery key printed at first start (also in data/recovery_key) sets a new password.
export function ResetPasswordPage() {
  const { t } = useTranslation("auth");
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState(false);
  const { register, handleSubmit, formState } = useForm<ResetForm>();
  return (
    <AuthFrame title={t("reset.title")}>
      {done ? (
        <p className="notice" role="status">
          {t("reset.done")} <Link to="/login">{t("login.title")}</Link>
        </p>
      ) : (
        <form
          onSubmit={handleSubmit(async (v) => {
            setError(null);
            try {
              await api("/user/reset-password", { method: "POST", body: v, anonymous: true });
              setDone(true);
            } catch (e) {
              setError(e);
            }
          })}
        >
          <p className="muted">{t("reset.intro")}</p>
          <div className="field">
            <label htmlFor="reset-user">{t("user")}</label>
            <input id="reset-user" autoComplete="username" required {...register("user", { required: true })} />
          </div>
          <div className="field">
            <label htmlFor="reset-key">{t("reset.key")}</label>
            <input id="reset-key" required autoComplete="off" className="mono" {...register("recovery_key", { required: true })} />
          </div>
          <div className="field">
            <label htmlFor="reset-password">{t("newPassword")}</label>
            <input
              id="reset-password"
              type="password"
              autoComplete="new-password"
              required
              minLength={8}
              {...register("new_password", { required: true, minLength: 8 })}
            />
          </div>
          <FormError error={error} />
          <button type="submit" className="btn btn-primary" disabled={formState.isSubmitting}>
            {t("reset.submit")}
          </button>
          <p className="muted">
            <Link to="/login">{t("reset.back")}</Link>
          </p>
        </form>
      )}
    </AuthFrame>
  );
}
