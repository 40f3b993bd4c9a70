public import Foundation

// Apple's Security framework names, as `String` constants holding Apple's own raw values
// (`kSecAttrAccount == "acct"`, `kSecClassGenericPassword == "genp"`), so that code written for
// Keychain Services compiles against keychaind with only the import changed.
// swiftlint:disable identifier_name

/// Apple's result code type.
public typealias OSStatus = Int32
/// Apple's `CFTypeRef` (results come back as `AnyObject?`, as in Swift on Apple platforms).
public typealias CFTypeRef = AnyObject
/// Apple's `CFDictionary`: `query as CFDictionary` and `NSDictionary` literals both work.
public typealias CFDictionary = NSDictionary
public typealias CFString = String

/// `kCFBooleanTrue` / `kCFBooleanFalse` (optional, as Apple's are).
public let kCFBooleanTrue: Bool? = true
public let kCFBooleanFalse: Bool? = false

// MARK: Classes
public let kSecClass = "class"
public let kSecClassGenericPassword = "genp"
public let kSecClassInternetPassword = "inet"
public let kSecClassCertificate = "cert"
public let kSecClassKey = "keys"
public let kSecClassIdentity = "idnt"

// MARK: Attributes (docs/keychain-semantics.md §1; the catalogue of KeychainCore.Attribute)
public let kSecAttrAccessible = "pdmn"
public let kSecAttrAccessControl = "accc"
public let kSecAttrAccessGroup = "agrp"
public let kSecAttrSynchronizable = "sync"
public let kSecAttrCreationDate = "cdat"
public let kSecAttrModificationDate = "mdat"
public let kSecAttrLabel = "labl"
public let kSecAttrSyncViewHint = "vwht"
public let kSecAttrTokenID = "tkid"
public let kSecAttrDescription = "desc"
public let kSecAttrComment = "icmt"
public let kSecAttrCreator = "crtr"
public let kSecAttrType = "type"
public let kSecAttrIsInvisible = "invi"
public let kSecAttrIsNegative = "nega"
public let kSecAttrAccount = "acct"
public let kSecAttrService = "svce"
public let kSecAttrGeneric = "gena"
public let kSecAttrSecurityDomain = "sdmn"
public let kSecAttrServer = "srvr"
public let kSecAttrProtocol = "ptcl"
public let kSecAttrAuthenticationType = "atyp"
public let kSecAttrPort = "port"
public let kSecAttrPath = "path"
public let kSecAttrCertificateType = "ctyp"
public let kSecAttrCertificateEncoding = "cenc"
public let kSecAttrSubject = "subj"
public let kSecAttrIssuer = "issr"
public let kSecAttrSerialNumber = "slnr"
public let kSecAttrSubjectKeyID = "skid"
public let kSecAttrPublicKeyHash = "pkhh"
public let kSecAttrKeyClass = "kcls"
public let kSecAttrApplicationLabel = "klbl"
public let kSecAttrApplicationTag = "atag"
public let kSecAttrKeyType = "type"
public let kSecAttrKeySizeInBits = "bsiz"
public let kSecAttrEffectiveKeySize = "esiz"
public let kSecAttrIsPermanent = "perm"
public let kSecAttrCanEncrypt = "encr"
public let kSecAttrCanDecrypt = "decr"
public let kSecAttrCanDerive = "drve"
public let kSecAttrCanSign = "sign"
public let kSecAttrCanVerify = "vrfy"
public let kSecAttrCanWrap = "wrap"
public let kSecAttrCanUnwrap = "unwp"
public let kSecAttrIsSensitive = "sens"
public let kSecAttrIsExtractable = "extr"
public let kSecAttrPersistentReference = "persistref"
/// kSecAttrSynchronizable's "either" value.
public let kSecAttrSynchronizableAny = "syna"
/// kSecAttrTokenID's one value: keys on it are refused with errSecUnimplemented (no Secure Enclave).
public let kSecAttrTokenIDSecureEnclave = "com.apple.setoken"
/// The access group of token items: never among a keychaind client's groups.
public let kSecAttrAccessGroupToken = "com.apple.token"

// MARK: Search, return and value keys (§4)
public let kSecMatchLimit = "m_Limit"
public let kSecMatchLimitOne = "m_LimitOne"
public let kSecMatchLimitAll = "m_LimitAll"
public let kSecMatchCaseInsensitive = "m_CaseInsensitive"
public let kSecReturnData = "r_Data"
public let kSecReturnAttributes = "r_Attributes"
public let kSecReturnRef = "r_Ref"
public let kSecReturnPersistentRef = "r_PersistentRef"
public let kSecValueData = "v_Data"
public let kSecValueRef = "v_Ref"
public let kSecValuePersistentRef = "v_PersistentRef"

// MARK: kSecUse keys: accepted and ignored (docs/decisions.md, "Constants Apple code passes")
/// keychaind is the data-protection keychain: asking for it changes nothing.
public let kSecUseDataProtectionKeychain = "nleg"
/// User authentication: no item needs it in keychaind, so there is nothing to authenticate,
/// prompt for or skip.
public let kSecUseAuthenticationContext = "u_AuthCtx"
public let kSecUseAuthenticationUI = "u_AuthUI"
public let kSecUseAuthenticationUIAllow = "u_AuthUIA"
public let kSecUseAuthenticationUIFail = "u_AuthUIF"
public let kSecUseAuthenticationUISkip = "u_AuthUIS"
public let kSecUseOperationPrompt = "u_OpPrompt"
public let kSecUseNoAuthenticationUI = "u_NoAuthUI"

// MARK: SecKeyCreateRandomKey
public let kSecPrivateKeyAttrs = "private"
public let kSecPublicKeyAttrs = "public"

// MARK: kSecAttrAccessible values
public let kSecAttrAccessibleWhenUnlocked = "ak"
public let kSecAttrAccessibleAfterFirstUnlock = "ck"
public let kSecAttrAccessibleAlways = "dk"
public let kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly = "akpu"
public let kSecAttrAccessibleWhenUnlockedThisDeviceOnly = "aku"
public let kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly = "cku"
public let kSecAttrAccessibleAlwaysThisDeviceOnly = "dku"

// MARK: kSecAttrProtocol values
public let kSecAttrProtocolFTP = "ftp "
public let kSecAttrProtocolFTPAccount = "ftpa"
public let kSecAttrProtocolHTTP = "http"
public let kSecAttrProtocolIRC = "irc "
public let kSecAttrProtocolNNTP = "nntp"
public let kSecAttrProtocolPOP3 = "pop3"
public let kSecAttrProtocolSMTP = "smtp"
public let kSecAttrProtocolSOCKS = "sox "
public let kSecAttrProtocolIMAP = "imap"
public let kSecAttrProtocolLDAP = "ldap"
public let kSecAttrProtocolAppleTalk = "atlk"
public let kSecAttrProtocolAFP = "afp "
public let kSecAttrProtocolTelnet = "teln"
public let kSecAttrProtocolSSH = "ssh "
public let kSecAttrProtocolFTPS = "ftps"
public let kSecAttrProtocolHTTPS = "htps"
public let kSecAttrProtocolHTTPProxy = "htpx"
public let kSecAttrProtocolHTTPSProxy = "htsx"
public let kSecAttrProtocolFTPProxy = "ftpx"
public let kSecAttrProtocolSMB = "smb "
public let kSecAttrProtocolRTSP = "rtsp"
public let kSecAttrProtocolRTSPProxy = "rtsx"
public let kSecAttrProtocolDAAP = "daap"
public let kSecAttrProtocolEPPC = "eppc"
public let kSecAttrProtocolIPP = "ipp "
public let kSecAttrProtocolNNTPS = "ntps"
public let kSecAttrProtocolLDAPS = "ldps"
public let kSecAttrProtocolTelnetS = "tels"
public let kSecAttrProtocolIMAPS = "imps"
public let kSecAttrProtocolIRCS = "ircs"
public let kSecAttrProtocolPOP3S = "pops"

// MARK: kSecAttrAuthenticationType values
public let kSecAttrAuthenticationTypeNTLM = "ntlm"
public let kSecAttrAuthenticationTypeMSN = "msna"
public let kSecAttrAuthenticationTypeDPA = "dpaa"
public let kSecAttrAuthenticationTypeRPA = "rpaa"
public let kSecAttrAuthenticationTypeHTTPBasic = "http"
public let kSecAttrAuthenticationTypeHTTPDigest = "httd"
public let kSecAttrAuthenticationTypeHTMLForm = "form"
public let kSecAttrAuthenticationTypeDefault = "dflt"

// MARK: Keys
public let kSecAttrKeyClassPublic = "0"
public let kSecAttrKeyClassPrivate = "1"
public let kSecAttrKeyClassSymmetric = "2"
public let kSecAttrKeyTypeRSA = "42"
public let kSecAttrKeyTypeECSECPrimeRandom = "73"
public let kSecAttrKeyTypeEC = "73"
public let kSecAttrKeyTypeDSA = "43"
public let kSecAttrKeyTypeAES = "2147483649"

// MARK: Result codes (docs/keychain-semantics.md §6)
public let noErr: OSStatus = 0
public let errSecSuccess: OSStatus = 0
public let errSecUnimplemented: OSStatus = -4
public let errSecDiskFull: OSStatus = -34
public let errSecIO: OSStatus = -36
public let errSecParam: OSStatus = -50
public let errSecAllocate: OSStatus = -108
public let errSecUserCanceled: OSStatus = -128
public let errSecBadReq: OSStatus = -909
public let errSecNotAvailable: OSStatus = -25291
public let errSecReadOnly: OSStatus = -25292
public let errSecAuthFailed: OSStatus = -25293
public let errSecDuplicateItem: OSStatus = -25299
public let errSecItemNotFound: OSStatus = -25300
public let errSecDataTooLarge: OSStatus = -25302
public let errSecNoSuchAttr: OSStatus = -25303
public let errSecInvalidItemRef: OSStatus = -25304
public let errSecNoSuchClass: OSStatus = -25306
public let errSecInteractionNotAllowed: OSStatus = -25308
public let errSecReadOnlyAttr: OSStatus = -25309
public let errSecInteractionRequired: OSStatus = -25315
public let errSecDataNotAvailable: OSStatus = -25316
public let errSecDecode: OSStatus = -26275
public let errSecMissingEntitlement: OSStatus = -34018
public let errSecRestrictedAPI: OSStatus = -34020
public let errSecInvalidValue: OSStatus = -67694
/// SecKeyVerifySignature's code for a signature that does not verify.
public let errSecVerifyFailed: OSStatus = -67808
public let errSecServiceNotAvailable: OSStatus = -67585
