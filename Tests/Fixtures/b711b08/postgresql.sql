--
-- PostgreSQL database dump
--

\restrict cA7Xkekq7dqPhkWPAXK7lJiE34V32RswL4a4pTl6WwUvPnTedrENl0w3yULYoKc

-- Dumped from database version 15.18 (Debian 15.18-0+deb12u1)
-- Dumped by pg_dump version 15.18 (Debian 15.18-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: text_digest(text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.text_digest(text) RETURNS bytea
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN sha256(textsend($1));


SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: clients; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.clients (
    name text NOT NULL,
    access_groups text NOT NULL,
    role text NOT NULL,
    created bigint NOT NULL,
    token_hash bytea NOT NULL
);


--
-- Name: cluster_state; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.cluster_state (
    id integer NOT NULL,
    locked boolean DEFAULT false NOT NULL,
    clients_version bigint DEFAULT 0 NOT NULL,
    keyring_version bigint DEFAULT 0 NOT NULL,
    CONSTRAINT cluster_state_id_check CHECK ((id = 1))
);


--
-- Name: group_usage; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.group_usage (
    access_group text NOT NULL,
    items bigint NOT NULL,
    secret_bytes bigint NOT NULL,
    shard integer DEFAULT 0 NOT NULL
);


--
-- Name: items; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.items (
    seq bigint NOT NULL,
    class text NOT NULL,
    persistent_ref text NOT NULL,
    accessible text,
    "accessControl" bytea,
    "accessGroup" text,
    synchronizable bigint,
    "creationDate" bigint,
    "modificationDate" bigint,
    label text,
    "syncViewHint" text,
    "tokenID" text,
    description text,
    comment text,
    creator bigint,
    type bigint,
    "isInvisible" bigint,
    "isNegative" bigint,
    account text,
    service text,
    generic bytea,
    "securityDomain" text,
    server text,
    protocol text,
    "authenticationType" text,
    port bigint,
    path text,
    "certificateType" text,
    "certificateEncoding" text,
    subject bytea,
    issuer bytea,
    "serialNumber" bytea,
    "subjectKeyID" bytea,
    "publicKeyHash" bytea,
    "keyClass" text,
    "applicationLabel" bytea,
    "applicationTag" bytea,
    "keyType" text,
    "keySizeInBits" bigint,
    "effectiveKeySize" bigint,
    "isPermanent" bigint,
    "canEncrypt" bigint,
    "canDecrypt" bigint,
    "canDerive" bigint,
    "canSign" bigint,
    "canVerify" bigint,
    "canWrap" bigint,
    "canUnwrap" bigint,
    "isSensitive" bigint,
    "isExtractable" bigint,
    secret bytea
);


--
-- Name: items_seq_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.items ALTER COLUMN seq ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.items_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: keyring; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.keyring (
    term bigint NOT NULL,
    wrapped_key bytea NOT NULL,
    created bigint NOT NULL,
    encryptions bigint DEFAULT 0 NOT NULL
);


--
-- Name: keyring_check; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.keyring_check (
    id integer NOT NULL,
    check_value bytea NOT NULL,
    CONSTRAINT keyring_check_id_check CHECK ((id = 1))
);


--
-- Name: schema_migrations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.schema_migrations (
    version bigint NOT NULL,
    applied timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Data for Name: clients; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.clients (name, access_groups, role, created, token_hash) FROM stdin;
admin	["admin"]	admin	1795855884469	\\x86e8f3f2a51d34bedf2caf5d57819b06a9734487b3b14ca7a1e10c3208358c0d
fixture-app	["app"]	client	1795855884561	\\x2c79d29c37e4750e235e1f0e7a793473191639ba35623a645ac7a9669c82190e
\.


--
-- Data for Name: cluster_state; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.cluster_state (id, locked, clients_version, keyring_version) FROM stdin;
1	f	1	1
\.


--
-- Data for Name: group_usage; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.group_usage (access_group, items, secret_bytes, shard) FROM stdin;
app	1	20	9
admin	1	121	13
admin	5	600	9
admin	5	496	11
keychaind.refresh	1	21	9
admin	1	21	10
\.


--
-- Data for Name: items; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.items (seq, class, persistent_ref, accessible, "accessControl", "accessGroup", synchronizable, "creationDate", "modificationDate", label, "syncViewHint", "tokenID", description, comment, creator, type, "isInvisible", "isNegative", account, service, generic, "securityDomain", server, protocol, "authenticationType", port, path, "certificateType", "certificateEncoding", subject, issuer, "serialNumber", "subjectKeyID", "publicKeyHash", "keyClass", "applicationLabel", "applicationTag", "keyType", "keySizeInBits", "effectiveKeySize", "isPermanent", "canEncrypt", "canDecrypt", "canDerive", "canSign", "canVerify", "canWrap", "canUnwrap", "isSensitive", "isExtractable", secret) FROM stdin;
1	genp	x_IgEBUVNHR1xSr9367fcA	whenUnlocked	\N	admin	0	1795855884512	1795855884512	fixture generic	\N	\N	\N	made by b711b08	\N	\N	\N	\N	alice	fixture.example.com	\\x67656e657269632d617474726962757465	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\\x0100000001c9d584c070546e1ba28996e411b4d353dc299c5578365e11576be12553453e198acce6450220eda9feab43c65a17f94d4c
2	inet	yQ_zTenRWGoF4Ry13DvkUg	whenUnlocked	\N	admin	0	1795855884527	1795855884527	\N	\N	\N	\N	\N	\N	\N	\N	\N	bob	\N	\N	\N	fixture.example.com	https	\N	8443	/login	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\\x0100000001d5bebbeb7b81063375438a5aeae828ca3b8a54e95c4d8b37f2da1ec762998aa916b1557850f20c24ef2b249321892a8d6ba0
3	cert	Y4BlNzNrzsnNRWStWyY_pg	always	\N	admin	0	1795855884540	1795855884540	fixture certificate	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	x509v3	der	\\x30283126302406035504030c1d6b6579636861696e642066697874757265206365727469666963617465	\\x30283126302406035504030c1d6b6579636861696e642066697874757265206365727469666963617465	\\x25b4ca19e5fca36770d64d9232123fe09fc9514e	\\xb16e97787fcc25a91522998c137b7bad9a8c0a83	\\xb16e97787fcc25a91522998c137b7bad9a8c0a83	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\\x0100000001f3d1532cfdf7ccb945cb164d44fe4f5cdedd75b08cb81f0c4260215aaa160f18d1ceb3a405573ea6bb0f8e31e3d9ba09f8e46584a48c63f42a81e1a8609439d3c91871794c1b045dcb9f57f6fab4bb4ab22efd1845cfecd5b0a712d35304ed3eddad25eb84c6f5c9dd4616438ff1c4db2e271998b3bb5e21e69362e0e12f59bd1f37b75b928d48dcacefb89792a015ac472b90da4e4b8ec65887a7b259b85729a32610d5f6843067e40ab16a35cea58b7ba70ab5fc0853e30d515fa556d004cff20b991e0e49ef57e16c35ccc7651b08ee0e5db9dbfe4dd0854875da775b8bf6e0c714bb90b450688233867aee730def1035587ac8331baa14963c8ff9431f0bc5178d3c2f5b3e3613b364d6d0baf73b2b2b86476f378ad2808094617fc4c6eb33b30e16bea72290f292e2ce64db7e284d1e71654ba4b9082573a03d00fb17ce5ec395ba2b39e9a7d62d4cf1dc79a091b11184a4bb9756742f71a9167013d85f1567e43f83b7faf8be3cd9c737e1a631ab8207e21b0cd8576dc18387c2586d309651d3fe92f3017c1df1bf2246aa101dd4a3e394c6b28a639e516ba40a7bb2781b6c0e36d88f6786a333988beb383a8a929c19a6692f58d89b00fdc4253b8599d0fbb7d7a0d812
4	genp	zc_TBLg9UykkvFRnHlY7lg	whenUnlocked	\N	admin	0	1795855884551	1795855884551	\N	\N	\N	\N	\N	\N	\N	\N	\N	accessToken	fixture-api	\\x7b22657870697265734174223a22323033352d30312d30315430303a30303a30302e3030305a227d	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\\x01000000015ee9d422c8f6b82bd57e3539b4eb1c802d839cf238d633a8e709f557c86075cce8b294806e046f6ebdb09013cb2e
5	genp	fjIIwufw_ATS_alYRMZ45g	whenUnlocked	\N	admin	0	1795855884551	1795855884551	\N	\N	\N	\N	\N	\N	\N	\N	\N	refreshToken	fixture-api	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\\x0100000001b75b13adc0dbac79fad1703ff6bbb7c82138e77073c613ee412421557cdfd9ec0fee35cf18276c445efed676a4c52b
6	genp	Do61iT59qebuXoShUJuiwg	whenUnlocked	\N	app	0	1795855884661	1795855884661	\N	\N	\N	\N	\N	\N	\N	\N	\N	app-user	fixture.app	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\\x0100000001ca1062eb81cc2a803be7a7a05bf9a12a9a986cf2ba075895cd58427d67b25c4cc206e768c5016c7fcc59443cac7ad4cf
7	keys	ijfdBgofzIPU9IDVgciCUg	whenUnlocked	\N	admin	0	1795855884686	1795855884686	fixture key	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	private	\N	\\x666978747572652e6b6579	ecsecPrimeRandom	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\\x01000000022209e585eb5a31f9d0bee97aa8b288eee26212ac712c64cefedc40757b02eec060513e3cfea7311ebf9bcc91572217065bbd93219dba32fc5ece4953055e971f070fbd5ddb65186288c324c085e43def943de1cf5872eb67081ac5accf4a82c7022d13d95633e1b7b6bb69d66e167acc673f17ba5cd5f6ce7a6f9eb36c7b8f75f51455db50605cdb5c4a71de8f61dc6bb83a9ac42d
8	cert	MtcBqspEBRmMbSpXWXJA_g	always	\N	admin	0	1795855884700	1795855884700	fixture identity	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	x509v3	der	\\x30253123302106035504030c1a6b6579636861696e642066697874757265206964656e74697479	\\x30253123302106035504030c1a6b6579636861696e642066697874757265206964656e74697479	\\x619cf7f7bfb46dd54f406dc7c4ff73a9b7f5ffde	\\x729bdf9b61c6257f0f6cbb27b9a73c0d8194cd11	\\x729bdf9b61c6257f0f6cbb27b9a73c0d8194cd11	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\\x0100000002a931af6540830452a1a2d017ebaa10c5ce2164e2da524bdfd386da2297df8348942622a3b65d0a30fc9be024bfb53a1cc56c956bff71c78257c90cf669956186daec0599fa67acca9766b837426d578195c9da1f95ebc78eadd691ef67c7e05b58a994731004ded9fac28ce2585f5cd1ccc42ed526ecfc7a85ca57b05c1bdb811d70615fc4dac9cacf24d9f3898c4cbed262c56e539b9cf6daf072fadf622e00dde3031b5807f87559f261fd91fb3633b342cc12114e3142007b65b706228f2bd9aef1c192949552ea0db16828916f7d3dbc71ee7c75671570c130425243e8948086b25322fbd4f08cfdc232a247d8d92a164acc73a42051c319582e7eba701e2d0df6d35af77ed929274bcbfab19926d35a09bf6d332be0d7f4bc1cd67a0f5256009dc6e5120f5b67a17d2e9f9f177c4b14a06d0193ca8e21a934b210195b408e8040566604f81cfe4c891166123963638fc57b56fa9e4c8d3ba8bf59eef87574f2ef59581bf0bc37ff919d94cb8bf11c5953bb67ad50524cd94106657cda0a59ff26bda625c1fc4f20321def91bb6ec3bc0f73921bcc27c7e773c9f8b88f0dc82f5b514edbaff43a56974da3eb625f595198b0365136417ffeb4bfe63d007eff
9	keys	CyZZMUMSXcf0kuTJ4-o5Dw	whenUnlocked	\N	admin	0	1795855884700	1795855884700	fixture identity	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	private	\\x729bdf9b61c6257f0f6cbb27b9a73c0d8194cd11	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\\x0100000002657cc1fef913d10489f5d954422eb9926dde4464d908abb4ab1820e0fcb274ab27dc821c86aee14a75022466864739359150d445261fa43486c002ae18040e4c2f87ac1e4d7c07abb1d4953908c71244c7f5d18ee2efe26c285114f335e7ac0bfb02effc7389bce6282a40def18fe0ec93e9dc11dcc269bb9b3fdfe96b6a505edee34f3ba666140926c4ca69d10d4912da2c2b55c6
10	genp	SHg1d-7POXiHdFAIjvkC4g	whenUnlocked	\N	admin	0	1795855884711	1795855884711	\N	\N	\N	\N	\N	\N	\N	\N	\N	carol	fixture-api.accessToken	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\\x01000000027a485d1e3ba077df946f4188584862be80f907b1a5bb8865164c1ffedd9d791a4c8158237c053f3f
11	genp	JBwXjHOaBn3kiU5yY1ac8Q	whenUnlocked	\N	admin	0	1795855884711	1795855884711	\N	\N	\N	\N	\N	\N	\N	\N	\N	carol	fixture-api.refreshToken	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\\x01000000025747c2871af00cb42149274aca1a9046bfa5265e869f0aa5d473fef5800a251aab091009f3c607dba9
13	genp	ddmdDxzuSWj8nIS_X-iMAQ	whenUnlocked	\N	keychaind.refresh	0	1795855884730	1795855884730	\N	\N	\N	\N	\N	\N	\N	\N	\N	5:admin	fixture-refresh	\\x7b22746f6b656e456e64706f696e74223a22687474703a2f2f3132372e302e302e313a392f746f6b656e222c226772616e74223a22636c69656e745f63726564656e7469616c73222c22636c69656e744964223a22666978747572652d636c69656e74222c22636c69656e7441757468223a226261736963222c2273636f7065223a2272656164222c2261756469656e6365223a6e756c6c2c22726566726573684265666f7265223a36302c227374617465223a226f6b222c226c617374526566726573684174223a6e756c6c2c226e657874526566726573684174223a22323033342d31322d33315432333a35393a30302e3030305a222c226661696c75726573223a302c226c6173744572726f72223a6e756c6c7d	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\\x0100000002c7f8eaf7b53904886d932e8a3e049e45a7a3873b064c297b212aa61fcf76c25d7910e794fc7ab8ece52309f4797320c7bd
12	genp	QTHR-a16NBSoTB7pLebQhw	whenUnlocked	\N	admin	0	1795855884721	1795855884732	\N	\N	\N	\N	\N	\N	\N	\N	\N	accessToken	fixture-refresh	\\x7b22657870697265734174223a22323033352d30312d30315430303a30303a30302e3030305a222c22726566726573684265666f7265223a36307d	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\\x010000000293ac7d89286dca4db65ea0e1987812a7af0a4f485360467979bd7a3013252a2de6dd3058391dea34a73ccf26324cbe93d34e
14	genp	mmrwYswyTZgjFNV-c2WNQA	whenUnlocked	\N	admin	0	1795855884744	1795855884744	\N	\N	\N	\N	\N	\N	\N	\N	\N	dave	fixture.example.com	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\\x010000000226a09a4a2f0c70e1a4f5999769a5c2e2ec6d6684975ad325371050394671419bb06d00c06d32f023e54759e206d43cb7cb
\.


--
-- Data for Name: keyring; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.keyring (term, wrapped_key, created, encryptions) FROM stdin;
1	\\x73afb8593aedfcc677535b0f13899dd5a903d6b74f366ecbaee556ecd248d98e03c514abf64a72705877ea3f6f6ab93b68cf2f83153cb5fd253fdd35	1795855884468	10000
2	\\x4b84239eccf1bf7ba969886ce0fd724609d5d03eac615308cabc230ae1e30955bfc3566dccac02aeaef7c618467ae34088162fadff35b2543a4d29c9	1795855884674	10000
\.


--
-- Data for Name: keyring_check; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.keyring_check (id, check_value) FROM stdin;
1	\\xc27414891808a231ea24bb83d33efd83cf8afecfb9aad52f3a5f58b5604771fe
\.


--
-- Data for Name: schema_migrations; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.schema_migrations (version, applied) FROM stdin;
1	2026-11-28 08:51:24.415626+00
2	2026-11-28 08:51:24.415626+00
3	2026-11-28 08:51:24.415626+00
\.


--
-- Name: items_seq_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.items_seq_seq', 14, true);


--
-- Name: clients clients_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.clients
    ADD CONSTRAINT clients_pkey PRIMARY KEY (name);


--
-- Name: clients clients_token_hash_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.clients
    ADD CONSTRAINT clients_token_hash_key UNIQUE (token_hash);


--
-- Name: cluster_state cluster_state_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.cluster_state
    ADD CONSTRAINT cluster_state_pkey PRIMARY KEY (id);


--
-- Name: group_usage group_usage_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.group_usage
    ADD CONSTRAINT group_usage_pkey PRIMARY KEY (access_group, shard);


--
-- Name: items items_persistent_ref_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.items
    ADD CONSTRAINT items_persistent_ref_key UNIQUE (persistent_ref);


--
-- Name: items items_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.items
    ADD CONSTRAINT items_pkey PRIMARY KEY (seq);


--
-- Name: keyring_check keyring_check_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.keyring_check
    ADD CONSTRAINT keyring_check_pkey PRIMARY KEY (id);


--
-- Name: keyring keyring_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.keyring
    ADD CONSTRAINT keyring_pkey PRIMARY KEY (term);


--
-- Name: schema_migrations schema_migrations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.schema_migrations
    ADD CONSTRAINT schema_migrations_pkey PRIMARY KEY (version);


--
-- Name: items_lookup_cert; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX items_lookup_cert ON public.items USING btree (sha256(COALESCE(issuer, '\x'::bytea)), sha256(COALESCE("serialNumber", '\x'::bytea)), COALESCE(synchronizable, (0)::bigint), seq) WHERE (class = 'cert'::text);


--
-- Name: items_lookup_genp; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX items_lookup_genp ON public.items USING btree (public.text_digest(COALESCE(service, ''::text)), public.text_digest(COALESCE(account, ''::text)), COALESCE(synchronizable, (0)::bigint), seq) WHERE (class = 'genp'::text);


--
-- Name: items_lookup_inet; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX items_lookup_inet ON public.items USING btree (public.text_digest(COALESCE(server, ''::text)), public.text_digest(COALESCE(account, ''::text)), COALESCE(synchronizable, (0)::bigint), seq) WHERE (class = 'inet'::text);


--
-- Name: items_lookup_keys; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX items_lookup_keys ON public.items USING btree (sha256(COALESCE("applicationTag", '\x'::bytea)), COALESCE(synchronizable, (0)::bigint), seq) WHERE (class = 'keys'::text);


--
-- Name: items_pk_cert; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX items_pk_cert ON public.items USING btree (sha256(COALESCE(issuer, '\x'::bytea)), sha256(COALESCE("serialNumber", '\x'::bytea)), public.text_digest(COALESCE("accessGroup", ''::text)), COALESCE(synchronizable, (0)::bigint), public.text_digest(COALESCE("syncViewHint", ''::text)), public.text_digest(COALESCE("tokenID", ''::text)), public.text_digest(COALESCE("certificateType", ''::text))) WHERE (class = 'cert'::text);


--
-- Name: items_pk_genp; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX items_pk_genp ON public.items USING btree (public.text_digest(COALESCE(service, ''::text)), public.text_digest(COALESCE(account, ''::text)), public.text_digest(COALESCE("accessGroup", ''::text)), COALESCE(synchronizable, (0)::bigint), public.text_digest(COALESCE("syncViewHint", ''::text)), public.text_digest(COALESCE("tokenID", ''::text))) WHERE (class = 'genp'::text);


--
-- Name: items_pk_inet; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX items_pk_inet ON public.items USING btree (public.text_digest(COALESCE(server, ''::text)), public.text_digest(COALESCE(account, ''::text)), public.text_digest(COALESCE("accessGroup", ''::text)), COALESCE(synchronizable, (0)::bigint), public.text_digest(COALESCE("syncViewHint", ''::text)), public.text_digest(COALESCE("tokenID", ''::text)), public.text_digest(COALESCE("securityDomain", ''::text)), public.text_digest(COALESCE(protocol, ''::text)), public.text_digest(COALESCE("authenticationType", ''::text)), COALESCE(port, (0)::bigint), public.text_digest(COALESCE(path, ''::text))) WHERE (class = 'inet'::text);


--
-- Name: items_pk_keys; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX items_pk_keys ON public.items USING btree (sha256(COALESCE("applicationTag", '\x'::bytea)), public.text_digest(COALESCE("accessGroup", ''::text)), COALESCE(synchronizable, (0)::bigint), public.text_digest(COALESCE("syncViewHint", ''::text)), public.text_digest(COALESCE("tokenID", ''::text)), public.text_digest(COALESCE("keyClass", ''::text)), sha256(COALESCE("applicationLabel", '\x'::bytea)), public.text_digest(COALESCE("keyType", ''::text)), COALESCE("keySizeInBits", (0)::bigint), COALESCE("effectiveKeySize", (0)::bigint)) WHERE (class = 'keys'::text);


--
-- PostgreSQL database dump complete
--

\unrestrict cA7Xkekq7dqPhkWPAXK7lJiE34V32RswL4a4pTl6WwUvPnTedrENl0w3yULYoKc

