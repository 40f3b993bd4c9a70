// Seed 002 (the auth-token note): its wrapper class keyChaingTokenUtils, copied from the seed
// with four typos fixed, without which it compiles against Apple's Security no more than here:
// `account: String`, `kSecMatchLimitOne`, `SecItemCopyMatching`, and a `return nil` on the failure
// path. `HTTPHeaders` is Alamofire's type, here the `[String: String]` it is built from.
// `import Security` (the seed's step 1) is `import KeychainClient`.
import Foundation
import KeychainClient

typealias HTTPHeaders = [String: String]

class keyChaingTokenUtils {

    // 키 체인에 값을 저장하는 메소드
	func save(_ service: String, account: String, value: String) {
		let keyChainQuery : NSDictionary = [
			kSecClass : kSecClassGenericPassword,
			kSecAttrService : service,
			kSecAttrAccount : account,
			kSecValueData : value.data(using: .utf8, allowLossyConversion: false)!
		]
		
		// 현재 저장되어 있는 값 삭제
		SecItemDelete(keyChainQuery)

		// 새로운 키 체인 아이템 등록
		let status: OSStatus = SecItemAdd(keyChainQuery, nil)
		assert(status == noErr, "토큰 값 저장에 실패했습니다.")
		NSLog("status=\(status)")
	}

	// 키 체인에 저장된 값을 읽어오는 메소드
	func load(_ service: String, account: String) -> String? {

		// 1. 키 체인 쿼리 정의
		let keyChainQuery: NSDictionary = [
			kSecClass : kSecClassGenericPassword,
			kSecAttrService : service,
			kSecAttrAccount : account, 
			kSecReturnData : kCFBooleanTrue!, // CFDataRef
			kSecMatchLimit : kSecMatchLimitOne
		]

		// 2. 키 체인에 저장된 값을 읽어온다. 
		var dataTypeRef: AnyObject?
		let status = SecItemCopyMatching(keyChainQuery, &dataTypeRef)

		// 3. 처리 결과가 성공이라면 
		if (status == errSecSuccess) {
			let retrievedData = dataTypeRef as! Data
			let value = String(data: retrievedData, encoding: String.Encoding.utf8)
			return value
		} else { // 4. 처리 결과가 실패라면 nil을 반환한다. 
			print("키 체인에서 불러올 데이터가 없습니다. Status code \(status)")
			return nil
		}
	}

	// 키 체인에 저장된 값을 삭제하는 메소드
	func delete(_ service: String, account: String) {
		let keyChainQuery: NSDictionary = [
			kSecClass : kSecClassGenericPassword,
			kSecAttrService : service,
			kSecAttrAccount : account, 
		]

		// 현재 저장되어 있는 값 삭제
		let status = SecItemDelete(keyChainQuery)
		assert(status == noErr, "토큰 값 삭제에 실패")
		NSLog("status=\(status)")
	}

	// 키 체인에 저장된 액세스 토큰을 이용하여 헤더를 만들어주는 메소드
	func getAuthorizationHeader() -> HTTPHeaders? {
		let serviceID = "Gus.Awesome.right"
		
		if let accessToken = self.load(serviceID, account: "accessToken") {
			return ["Authorization" : "Bearer \(accessToken)"] as HTTPHeaders
		} else {
			return nil
		}
	}
}
