-- POST /v1/auth/jwt/login with the same body on every request: {"role", "jwt"} from the environment.
wrk.method = "POST"
wrk.body = os.getenv("LOGIN_BENCH_BODY")
wrk.headers["Content-Type"] = "application/json"
