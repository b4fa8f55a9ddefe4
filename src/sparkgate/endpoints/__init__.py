"""Protocol endpoints (REST, HiveServer2), each a plug-in over the api's GatewayService."""
