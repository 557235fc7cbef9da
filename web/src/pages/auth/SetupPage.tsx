import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useForm } from "react-hook-form";
import { useTranslation } from "react-i18next";
import { Navigate, useNavigate } from "react-router";
import { api } from "../../api/client";
import { useAccountInfo, useAuth } from "../../auth/AuthContext";
import { FormError, Loading } from "../../components/PageState";
import { AuthFrame } from "./AuthFrame";

const loopbackHosts = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);

interface SetupForm {
  user: string;
  password: string;
  confirm: string;
  setup_code: string;
}

// First run: create the admin. Away from the server's own machine, the server asks for the
// one-time setup code it printed at start.
export function SetupPage() {
  const { t } = useTranslation("auth");
  const account = useAccountInfo();
  const { login } = useAuth();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [error, setError] = useState<unknown>(null);
  const remote = !loopbackHosts.has(window.location.hostname);
  const { register, handleSubmit, formState, watch } = useForm<SetupForm>();
  if (account.isPending) return <Loading />;
  if (account.data?.initialized) return <Navigate to="/login" replace />;
  return (
    <AuthFrame title={t("setup.title")}>
      <p className="muted">{t("setup.intro")}</p>
      <form
        onSubmit={handleSubmit(async (v) => {
          setError(null);
          try {
            await api("/user/init", {
              method: "POST",
              anonymous: true,
              body: { user: v.user, password: v.password, ...(v.setup_code ? { setup_code: v.setup_code } : {}) },
            });
            await queryClient.invalidateQueries({ queryKey: ["account-info"] });
            await login(v.user, v.password);
            navigate("/", { replace: true });
          } catch (e) {
            setError(e);
          }
        })}
      >
        <div className="field">
          <label htmlFor="setup-user">{t("user")}</label>
          <input id="setup-user" autoComplete="username" required {...register("user", { required: true })} />
        </div>
        <div className="field">
          <label htmlFor="setup-password">{t("password")}</label>
          <input
            id="setup-password"
            type="password"
            autoComplete="new-password"
            required
            minLength={8}
            {...register("password", { required: true, minLength: 8 })}
          />
        </div>
        <div className={`field${formState.errors.confirm ? " field-invalid" : ""}`}>
          <label htmlFor="setup-confirm">{t("confirmPassword")}</label>
          <input
            id="setup-confirm"
            type="password"
            autoComplete="new-password"
            required
            aria-invalid={formState.errors.confirm ? true : undefined}
            {...register("confirm", { validate: (c) => c === watch("password") || t("mismatch") })}
          />
          {formState.errors.confirm && <p className="field-error">{formState.errors.confirm.message}</p>}
        </div>
        <div className="field">
          <label htmlFor="setup-code">{t("setup.code")}</label>
          <input id="setup-code" autoComplete="one-time-code" required={remote} {...register("setup_code")} />
          <p className="field-help">{remote ? t("setup.codeNeeded") : t("setup.codeOptional")}</p>
        </div>
        <FormError error={error} />
        <button type="submit" className="btn btn-primary" disabled={formState.isSubmitting}>
          {t("setup.submit")}
        </button>
      </form>
    </AuthFrame>
  );
}
