from tests.conftest import body_of


def test_create_customer_returns_spec_body(api):
    response = api.post(
        "/customers", {"firstName": "Ada", "lastName": "Lovelace", "countryId": "826"}
    )
    assert response.status_code == (201 if api.version == "v2" else 200)
    body = body_of(response, api.version)
    assert body["customerId"].startswith("cus_")
    assert body["message"] == "Customer created."
    assert set(response.json()["meta"]) == {"tranId", "timestamp"}
