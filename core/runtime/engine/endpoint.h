/* Which Docker Engine to talk to, found the way the docker CLI finds it:
 * DOCKER_HOST (with DOCKER_TLS_VERIFY and DOCKER_CERT_PATH), else the
 * Docker context named by DOCKER_CONTEXT or by config.json's
 * currentContext (its meta.json and TLS files under $DOCKER_CONFIG/
 * contexts/), else the default socket. Reads those files; the rest is
 * host.h. Also what a remote engine means for a plan's bind mounts. */
#ifndef TPUCI_ENGINE_ENDPOINT_H
#define TPUCI_ENGINE_ENDPOINT_H

#include "runtime/engine/host.h"
#include "plan/plan.h"
#include "base/util.h"

/* The environment variables the resolution reads; NULL = unset. */
typedef struct {
  const char *docker_host;    /* DOCKER_HOST */
  const char *docker_context; /* DOCKER_CONTEXT */
  const char *tls_verify;     /* DOCKER_TLS_VERIFY */
  const char *cert_path;      /* DOCKER_CERT_PATH */
  const char *config_dir;     /* DOCKER_CONFIG */
  const char *home;           /* HOME */
} tpuci__docker_env_t;

/* Fills env from getenv(). */
void tpuci__docker_env_get(tpuci__docker_env_t *env);

/* Resolves the endpoint:
 *  1. DOCKER_HOST, when not empty. A tcp:// one uses TLS when
 *     DOCKER_TLS_VERIFY is not empty (the engine's certificate checked)
 *     or when DOCKER_CERT_PATH is set (not checked: the Engine SDK's
 *     client.FromEnv rule); the files are DOCKER_CERT_PATH's (default:
 *     the config folder) ca.pem, cert.pem and key.pem, all required.
 *  2. The context DOCKER_CONTEXT names, else config.json's
 *     currentContext; "default" is step 3. Its endpoint is
 *     contexts/meta/<sha256(name)>/meta.json's Endpoints.docker (Host,
 *     SkipTLSVerify), its TLS files ca.pem, cert.pem and key.pem in
 *     contexts/tls/<sha256(name)>/docker (those present are used).
 *  3. The default socket.
 * The config folder is DOCKER_CONFIG, else $HOME/.docker. Returns 0, or
 * TPUCI_EENGINE with a one-line message naming the variable, context or
 * file at fault. */
int tpuci__docker_host_resolve(const tpuci__docker_env_t *env, tpuci__docker_host_t *out,
                               tpuci__err_t *err);

/* tpuci__docker_host_resolve() with tpuci__docker_env_get(). */
int tpuci__docker_host_from_env(tpuci__docker_host_t *out, tpuci__err_t *err);

/* When the engine is remote (tpuci__docker_host_remote), one warning
 * per job of `kind` whose selected instances have bind mounts or a
 * pytest results folder (a bind mount of a folder of this machine):
 * those are folders of the engine's machine. Appended to out, as
 * "job 'unit': ... would be lost". */
void tpuci__remote_mount_warnings(const tpuci__plan_t *plan, tpuci__runtime_kind_t kind,
                                  const tpuci__docker_host_t *h, tpuci__strv_t *out);

/* An engine reached over ssh runs on another machine, so a pytest job's
 * results folder (a bind mount of a folder of this machine) would be one
 * of that machine and its JUnit lost: a new message refusing the first
 * selected pytest job of `kind`, or NULL. */
char *tpuci__remote_results_refusal(const tpuci__plan_t *plan, tpuci__runtime_kind_t kind,
                                    const tpuci__docker_host_t *h);

/* `tpuci doctor`'s lines about the endpoint (after its "engine" line):
 * TLS and its files, a DOCKER_CONTEXT that DOCKER_HOST overrides, and
 * the remote-mount warnings of `plan` (may be NULL). */
void tpuci__endpoint_doctor(const tpuci__docker_host_t *h, const tpuci__plan_t *plan,
                            tpuci__runtime_kind_t kind, tpuci__buf_t *report);

#endif /* TPUCI_ENGINE_ENDPOINT_H */
