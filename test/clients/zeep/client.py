"""Calls all five operations through zeep clients built from the live WSDL.

Usage: client.py BASE_URL LABEL PHONE [extended]
Prints one JSON line: {"<port>": {...values seen...}} for the SOAP 1.1, SOAP 1.2, HttpGet and HttpPost
ports. The TS test (test/clients/zeep.test.ts) holds the expected values. With "extended" (a service
run with SIS_RESULTS=extended), it reads the marks and push settings over both SOAP ports instead.
"""
import json
import sys

import zeep

FIELDS = ('id_student', 'fullName', 'id_device', 'ShowActive')
MARK_FIELDS = ('id_student', 'SubjectID', 'SubjectName', 'Mark', 'Term', 'MarkDate', 'Note')
SCHOOL = 'http://school-a.example'
SPECIAL_ID = 'k&<é>"\''


def students(result):
    # zeep unwraps ArrayOfStudentInfo to a list in SOAP answers but keeps the wrapper object for
    # the HTTP ports' mimeXml body; None would mean the client lost the list.
    if result is None:
        return None
    items = result if isinstance(result, list) else result.StudentInfo
    return [None if s is None else {f: s[f] for f in FIELDS} for s in items]


def values(notes, push, char):
    return {
        'active': students(notes.GetStudentSchool(school_base_url=SCHOOL, show_active=char('1'))),
        'inactive': students(notes.GetStudentSchool(school_base_url=SCHOOL, show_active=char('0'))),
        'known': push.GetTokenDevice(id='1'),
        'unknown': push.GetTokenDevice(id='no-such-device'),
        'special': push.GetTokenDevice(id='esc'),
        'specialId': push.GetTokenDevice(id=SPECIAL_ID),
    }


def marks(result):
    # As for students: a list in SOAP answers; a field left out of the answer (null) is None here.
    if result is None:
        return None
    items = result if isinstance(result, list) else result.Mark
    return [None if m is None else {f: m[f] for f in MARK_FIELDS if m[f] is not None} for m in items]


def extended(port):
    report = {}
    for key, suffix in (('soap11', 'Soap'), ('soap12', 'Soap12')):
        marks_port = port('GetStudnetsMarks', suffix)
        push = port('PushNotificationMobile', suffix).GetServerKeyAndSender()
        report[key] = {
            'math': marks(marks_port.GetStudentsMarks(StudnetID='1', SubjectID='math')),
            'all': marks(marks_port.GetStudentsMarks(StudnetID='1', SubjectID='')),
            'serverKey': None if push is None else {'ServerKey': push.ServerKey, 'SenderId': push.SenderId},
        }
    return report


def main():
    base, label, phone = sys.argv[1:4]
    clients = {name: zeep.Client(f'{base}/{name}.asmx?WSDL') for name in
               ('AuthCodeSending', 'GetStudnetsMarks', 'NotificationNotes', 'PushNotificationMobile')}

    def port(service, suffix):
        return clients[service].bind(service, service + suffix)

    if sys.argv[4:5] == ['extended']:
        print(json.dumps(extended(port), ensure_ascii=True))
        return

    report = {}
    for key, suffix in (('soap11', 'Soap'), ('soap12', 'Soap12')):
        # The WSDL types show_active as s1:char, an unsignedShort: the UTF-16 code, not the character.
        seen = values(port('NotificationNotes', suffix), port('PushNotificationMobile', suffix), ord)
        seen['authCode'] = port('AuthCodeSending', suffix).AuthCode(code=f'{label}-{key}', phone=phone)
        seen['marks'] = port('GetStudnetsMarks', suffix).GetStudentsMarks(StudnetID='1', SubjectID='math')
        seen['serverKey'] = port('PushNotificationMobile', suffix).GetServerKeyAndSender()
        report[key] = seen
    for key, suffix in (('httpget', 'HttpGet'), ('httppost', 'HttpPost')):
        # HTTP messages type the char part as s:string. zeep cannot call void HTTP operations
        # (their <wsdl:output /> has no mime part), so only the value-returning ones run here.
        report[key] = values(port('NotificationNotes', suffix), port('PushNotificationMobile', suffix), str)
    print(json.dumps(report, ensure_ascii=True))


if __name__ == '__main__':
    main()
